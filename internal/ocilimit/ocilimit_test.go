package ocilimit

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// endlessRegistry answers /v2/ and sends an endless manifest (or one that
// announces size bytes) for every other request, counting what it sent.
func endlessRegistry(t *testing.T, announce int64, sent *atomic.Int64) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			return
		}
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		if announce > 0 {
			w.Header().Set("Content-Length", strconv.FormatInt(announce, 10))
		}
		chunk := bytes.Repeat([]byte(" "), 64<<10)
		w.Write([]byte("{"))
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil || (announce > 0 && sent.Load() >= announce) {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestEndlessManifest: go-containerregistry reading an endless manifest
// through Transport stops after MaxManifest bytes (it reads 100 MB
// otherwise) with an error wrapping ErrTooLarge; a manifest that announces
// more is refused before its body is read.
func TestEndlessManifest(t *testing.T) {
	for _, tc := range []struct {
		name     string
		announce int64
	}{
		{"endless, no length", 0},
		{"announces 200 MiB", 200 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sent atomic.Int64
			host := endlessRegistry(t, tc.announce, &sent)
			ref, err := name.ParseReference(host+"/app/x:1", name.Insecure)
			if err != nil {
				t.Fatal(err)
			}
			_, err = remote.Get(ref, remote.WithTransport(Transport(http.DefaultTransport)))
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("remote.Get(endless manifest) = %v, want an error wrapping ErrTooLarge", err)
			}
			if !strings.Contains(err.Error(), "/v2/app/x/manifests/1") {
				t.Errorf("the error does not name the manifest: %v", err)
			}
			if got := sent.Load(); got > 2*MaxManifest+(8<<20) {
				t.Errorf("the registry sent %d MiB before the client stopped, want about %d MiB", got>>20, MaxManifest>>20)
			}
		})
	}
}

// TestManifestUnderLimit: a manifest of exactly MaxManifest bytes, and
// blobs of any size, pass unchanged.
func TestManifestUnderLimit(t *testing.T) {
	for _, tc := range []struct {
		path string
		size int
		ok   bool
	}{
		{"/v2/a/manifests/1", MaxManifest, true},
		{"/v2/a/manifests/1", MaxManifest + 1, false},
		{"/v2/a/b/referrers/sha256:00", MaxManifest + 1, false},
		{"/v2/a/blobs/sha256:00", 3 * MaxManifest, true},
		{"/files/manifests/x", 3 * MaxManifest, true},
	} {
		body := bytes.Repeat([]byte("m"), tc.size)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Transfer-Encoding", "chunked") // no Content-Length: the body limit decides
			w.Write(body)
		}))
		resp, err := Transport(nil).RoundTrip(httptest.NewRequest(http.MethodGet, srv.URL+tc.path, nil).WithContext(t.Context()))
		if err == nil {
			var got []byte
			got, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && !bytes.Equal(got, body) {
				t.Errorf("GET %s: body changed", tc.path)
			}
		}
		srv.Close()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrTooLarge)) {
			t.Errorf("GET %s of %d bytes: %v, want ok=%v", tc.path, tc.size, err, tc.ok)
		}
	}
}

// FuzzManifestLimit: whatever a registry sends and announces, a reader of
// the capped body never gets more than the limit, gets all of a body
// within it, and is told ErrTooLarge otherwise.
func FuzzManifestLimit(f *testing.F) {
	f.Add([]byte(`{"schemaVersion":2}`), int64(-1), 8, 3)
	f.Add(bytes.Repeat([]byte("x"), 100), int64(100), 10, 7)
	f.Add(bytes.Repeat([]byte("x"), 100), int64(5), 100, 1)
	f.Fuzz(func(t *testing.T, body []byte, announce int64, limit int, chunk int) {
		if limit < 0 || limit > 1<<16 || chunk <= 0 || chunk > 1<<16 {
			return
		}
		rt := &transport{limit: int64(limit), base: roundTripFunc(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, ContentLength: announce, Body: io.NopCloser(bytes.NewReader(body))}, nil
		})}
		resp, err := rt.RoundTrip(httptest.NewRequest(http.MethodGet, "http://r/v2/a/manifests/1", nil))
		if err != nil {
			if !errors.Is(err, ErrTooLarge) || announce <= int64(limit) {
				t.Fatalf("RoundTrip = %v with %d announced, limit %d", err, announce, limit)
			}
			return
		}
		var got []byte
		buf := make([]byte, chunk)
		for {
			n, err := resp.Body.Read(buf)
			got = append(got, buf[:n]...)
			if len(got) > limit {
				t.Fatalf("read %d bytes through a limit of %d", len(got), limit)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				if !errors.Is(err, ErrTooLarge) || len(body) <= limit {
					t.Fatalf("Read = %v for a body of %d, limit %d", err, len(body), limit)
				}
				return
			}
		}
		if !bytes.Equal(got, body) {
			t.Fatalf("read %d bytes of a body of %d within the limit %d", len(got), len(body), limit)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
