package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// Errors a look-up wraps.
var (
	// ErrRedirect: upstream redirected to another host, off loopback, or
	// from HTTPS to HTTP.
	ErrRedirect = errors.New("redirect refused")
	// ErrTooLarge: an answer was larger than its bound.
	ErrTooLarge = errors.New("answer too large")
	// ErrTooManyPages: pagination went on past its bound.
	ErrTooManyPages = errors.New("too many pages")
	// ErrOffline: a look-up was asked for with the network off.
	ErrOffline = errors.New("looking upstream needs the network")
)

// Limits bounds what a look-up reads from upstream.
type Limits struct {
	// Bytes bounds one response body (default 32 MiB: a big Helm
	// repository's index is about 20).
	Bytes int64
	// Pages bounds the pages of a paginated answer (default 20).
	Pages int
	// Names bounds the names kept from one upstream (default 100,000).
	Names int
}

func (l Limits) withDefaults() Limits {
	if l.Bytes <= 0 {
		l.Bytes = 32 << 20
	}
	if l.Pages <= 0 {
		l.Pages = 20
	}
	if l.Names <= 0 {
		l.Names = 100_000
	}
	return l
}

// checkRedirect follows a redirect only to the same host and port, never
// from HTTPS to HTTP, at most five times: an upstream answer sent
// elsewhere (a loopback server sending kbuild off loopback, a listing
// pointing at another host) is refused, not followed.
func checkRedirect(req *http.Request, via []*http.Request) error {
	from := via[len(via)-1].URL
	switch {
	case len(via) >= 5:
		return fmt.Errorf("%s: more than 5 redirects: %w", from.Redacted(), ErrRedirect)
	case from.Scheme == "https" && req.URL.Scheme != "https":
		return fmt.Errorf("%s redirects to %s, from HTTPS to plain HTTP: %w", from.Redacted(), req.URL.Redacted(), ErrRedirect)
	case isLoopback(from.Hostname()) && !isLoopback(req.URL.Hostname()):
		return fmt.Errorf("%s redirects off loopback to %s: %w", from.Redacted(), req.URL.Redacted(), ErrRedirect)
	case !strings.EqualFold(from.Host, req.URL.Host):
		return fmt.Errorf("%s redirects to another host, %s: %w", from.Redacted(), req.URL.Redacted(), ErrRedirect)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// get reads rawURL, at most limit bytes, and returns the body and the
// response's headers.
func get(ctx context.Context, c *http.Client, rawURL string, limit int64, hdr http.Header) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("GET %s: %w", redact(rawURL), err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, fmt.Errorf("GET %s: %w", redact(rawURL), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("GET %s: %s", redact(rawURL), resp.Status)
	}
	if resp.ContentLength > limit {
		return nil, nil, fmt.Errorf("GET %s: the server announces %d bytes, more than the limit of %d: %w", redact(rawURL), resp.ContentLength, limit, ErrTooLarge)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, nil, fmt.Errorf("GET %s: %w", redact(rawURL), err)
	}
	if int64(len(body)) > limit {
		return nil, nil, fmt.Errorf("GET %s: more than the limit of %d bytes: %w", redact(rawURL), limit, ErrTooLarge)
	}
	return body, resp.Header, nil
}

// redact hides a URL's password.
func redact(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		return u.Redacted()
	}
	return rawURL
}

// githubToken returns the token sent to a GitHub API: $GITHUB_TOKEN, for
// api.github.com only, so a token never goes to another server.
func githubToken(api string) string {
	if u, err := url.Parse(api); err == nil && u.Host == "api.github.com" {
		return os.Getenv("GITHUB_TOKEN")
	}
	return ""
}
