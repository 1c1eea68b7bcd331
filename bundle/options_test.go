package bundle

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/internal/netdeadline"
)

// TestWithTimeoutSetsIdle: WithTimeout is the idle timeout of the
// deadline transport every registry request goes through, so a registry
// that sends a few bytes of a blob and then nothing is given up on after
// it, naming how long.
func TestWithTimeoutSetsIdle(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		io.WriteString(w, "start")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	o := makeOptions([]Option{WithTimeout(200 * time.Millisecond)})
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/v2/x/blobs/sha256:00", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := o.transport.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip = %v; want the headers", err)
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	if !errors.Is(err, netdeadline.ErrStalled) || !strings.Contains(err.Error(), "no data for 200ms after 5 bytes") {
		t.Fatalf("reading a stalled blob with WithTimeout(200ms) = %v; want netdeadline.ErrStalled after 200ms", err)
	}
}
