package ocilimit

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// MaxManifest is the largest manifest, image index or referrers list a
// registry may send: 4 MiB, what the OCI distribution specification asks
// registries to accept.
const MaxManifest = 4 << 20

// ErrTooLarge is wrapped by the error of a manifest over the limit.
var ErrTooLarge = errors.New("manifest too large")

// Transport returns base with manifest responses capped at MaxManifest
// (see the package doc). A nil base means http.DefaultTransport.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base, limit: MaxManifest}
}

type transport struct {
	base  http.RoundTripper
	limit int64
}

// capped reports whether the path is a manifest or referrers request of
// the registry API: /v2/NAME/manifests/REF or /v2/NAME/referrers/DIGEST.
func capped(path string) bool {
	if !strings.HasPrefix(path, "/v2/") {
		return false
	}
	return strings.Contains(path, "/manifests/") || strings.Contains(path, "/referrers/")
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || req.Method == http.MethodHead || !capped(req.URL.Path) || resp.Body == nil {
		return resp, err
	}
	if resp.ContentLength > t.limit {
		resp.Body.Close()
		return nil, fmt.Errorf("%s: the registry announces a manifest of %d bytes, more than the %d MiB allowed: %w", redact(req), resp.ContentLength, t.limit>>20, ErrTooLarge)
	}
	resp.Body = &limited{rc: resp.Body, left: t.limit, url: redact(req), limit: t.limit}
	return resp, nil
}

// redact is the request URL without its query (which may carry tokens).
func redact(req *http.Request) string {
	u := *req.URL
	u.RawQuery, u.User = "", nil
	return u.String()
}

// limited fails once more than limit bytes have been read.
type limited struct {
	rc    io.ReadCloser
	left  int64
	limit int64
	url   string
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, l.err()
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.rc.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return 0, l.err()
	}
	return n, err
}

func (l *limited) err() error {
	return fmt.Errorf("%s: the registry sent a manifest of more than %d MiB: %w", l.url, l.limit>>20, ErrTooLarge)
}

func (l *limited) Close() error { return l.rc.Close() }
