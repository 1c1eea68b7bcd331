package bundle

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/internal/netdeadline"
)

// TestWithTimeoutSetsIdle: WithTimeout is the idle timeout of the
// deadline transport every registry request goes through, so a registry
// that never starts answering is given up on after it, and the error says
// how long was waited.
func TestWithTimeoutSetsIdle(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // answers nothing until the client gives up
	}))
	defer srv.Close()

	o := makeOptions([]Option{WithTimeout(200 * time.Millisecond)})
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/v2/", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := o.transport.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, netdeadline.ErrStalled) || !strings.Contains(err.Error(), "no response within 200ms") {
		t.Fatalf("a silent registry with WithTimeout(200ms) = %v; want netdeadline.ErrStalled after 200ms", err)
	}
}

// withNow sets the reference time for the index's and root's expiry
// (time.Now() outside the tests).
func withNow(t time.Time) Option { return func(o *options) { o.now = t } }

// withMaxBlobSize lowers the cap on any one blob read from a registry or
// a bundle (64 GiB outside the tests).
func withMaxBlobSize(n int64) Option { return func(o *options) { o.maxBlob = n } }
