package sources

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/internal/ocilimit"
)

// Credentials for HTTP(S) downloads and chart repositories come, in this
// order, from user:password in the URL, from the environment variable
// KBUILD_HTTP_AUTH_<HOST> and from a .netrc file ($NETRC, else ~/.netrc).
// <HOST> is the host name without port, upper-cased, with every character
// other than A-Z and 0-9 replaced by '_' (charts.example.com:8443 →
// KBUILD_HTTP_AUTH_CHARTS_EXAMPLE_COM). Its value is "user:password" for
// basic authentication, or a token without ':' sent as "Bearer <token>".
// Credentials are never logged; URLs in messages and errors are redacted.
const authEnvPrefix = "KBUILD_HTTP_AUTH_"

// defaultClient returns a client whose every response, read by kbuild or
// by go-containerregistry, is bounded by idle and by netdeadline.Budget; a
// body that goes quiet is reported to logf.
func defaultClient(idle time.Duration, logf func(string, ...any)) *http.Client {
	return &http.Client{Transport: netdeadline.Transport(http.DefaultTransport, idle, netdeadline.WithProgress(logf))}
}

// transport returns the round tripper of the Fetcher's client for
// registry requests: manifests capped at ocilimit.MaxManifest before
// go-containerregistry reads them.
func (f *Fetcher) transport() http.RoundTripper {
	if f.client.Transport != nil {
		return ocilimit.Transport(f.client.Transport)
	}
	return ocilimit.Transport(http.DefaultTransport)
}

// statusError is an HTTP response that is not what was asked for.
type statusError struct {
	url    string
	status string
	code   int
}

func (e *statusError) Error() string {
	msg := fmt.Sprintf("GET %s: %s", e.url, e.status)
	if e.code == http.StatusUnauthorized || e.code == http.StatusForbidden {
		msg += "; set credentials in ~/.netrc or " + authEnvPrefix + "<HOST>"
	}
	return msg
}

// Unwrap makes a 5xx or 429 response an ErrUnavailable.
func (e *statusError) Unwrap() error {
	if e.code >= 500 || e.code == http.StatusTooManyRequests {
		return ErrUnavailable
	}
	return nil
}

// retryable reports whether a failed attempt may succeed when repeated:
// 5xx responses and broken or refused connections (io.EOF: the server
// closed the connection before responding).
func retryable(err error) bool {
	var se *statusError
	if errors.As(err, &se) {
		return se.code >= 500
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// withRetries runs attempt up to 1+retries times, with exponential
// backoff, while it fails with a retryable error. Each attempt is bounded
// by the client's transport (idle timeout and size budget, see
// netdeadline); a stall is not retried. Errors of attempt name what
// failed; what names it for cancellation.
func (f *Fetcher) withRetries(ctx context.Context, what string, attempt func(context.Context) error) error {
	var err error
	for i := 0; i <= f.retries; i++ {
		if i > 0 {
			wait := f.backoff << (i - 1)
			f.logf("%s: %v; retrying in %s", what, err, wait)
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s: %w", what, ctx.Err())
			case <-time.After(wait):
			}
		}
		err = attempt(ctx)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case !retryable(err):
			return err
		}
	}
	return fmt.Errorf("%w (gave up after %d attempts)", err, f.retries+1)
}

// get sends one GET request with client and returns the response if its
// status is 200, or 304 when notModified is allowed. Requests through the
// Fetcher's own client carry credentials for their host.
func (f *Fetcher) get(ctx context.Context, client *http.Client, rawURL string, hdr http.Header, notModified bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redact(rawURL), err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if client == f.client {
		authorize(req)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redact(rawURL), unwrapURLError(err))
	}
	if resp.StatusCode == http.StatusOK || (notModified && resp.StatusCode == http.StatusNotModified) {
		return resp, nil
	}
	resp.Body.Close()
	return nil, &statusError{url: redact(rawURL), status: resp.Status, code: resp.StatusCode}
}

// unwrapURLError drops *url.Error, whose message repeats the URL unredacted.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// download streams rawURL (http, https or file) into the cache, at most
// the Fetcher's download limit, and returns its digest. verify is called
// once all bytes are read; if it fails nothing is stored.
func (f *Fetcher) download(ctx context.Context, rawURL string, verify func(string, int64) error) (string, error) {
	if isFileURL(rawURL) {
		in, err := os.Open(fileURLPath(rawURL))
		if err != nil {
			return "", fmt.Errorf("read %s: %w", rawURL, err)
		}
		defer in.Close()
		d, err := f.cache.put(ctxReader{ctx, in}, f.maxDownload, verify)
		if errors.Is(err, ErrTooLarge) {
			return "", fmt.Errorf("read %s: file is larger than the download limit of %d bytes: %w", rawURL, f.maxDownload, ErrTooLarge)
		}
		return d, err
	}
	return f.httpDownload(ctx, f.client, rawURL, verify)
}

// httpDownload streams rawURL into the cache with client, retrying as
// withRetries does, and returns the digest.
func (f *Fetcher) httpDownload(ctx context.Context, client *http.Client, rawURL string, verify func(string, int64) error) (string, error) {
	var digest string
	what := "download " + redact(rawURL)
	err := f.withRetries(ctx, what, func(ctx context.Context) error {
		resp, err := f.get(ctx, client, rawURL, nil, false)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.ContentLength > f.maxDownload {
			return fmt.Errorf("%s: the server announces %d bytes, more than the download limit of %d: %w", what, resp.ContentLength, f.maxDownload, ErrTooLarge)
		}
		digest, err = f.cache.put(resp.Body, f.maxDownload, verify)
		switch {
		case errors.Is(err, ErrTooLarge):
			return fmt.Errorf("%s: more than the download limit of %d bytes: %w", what, f.maxDownload, err)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return fmt.Errorf("%s: the connection ended before the %d bytes announced: %w", what, resp.ContentLength, err)
		case err != nil && !isVerifyError(err):
			return fmt.Errorf("%s: %w", what, err)
		}
		return err
	})
	return digest, err
}

// isVerifyError reports errors that come from verification, which carry
// their own context.
func isVerifyError(err error) bool {
	var dm *DigestMismatchError
	return errors.As(err, &dm) || errors.Is(err, ErrUnsafe)
}

func isFileURL(rawURL string) bool { return strings.HasPrefix(rawURL, "file://") }

func fileURLPath(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		return filepath.FromSlash(u.Path)
	}
	return strings.TrimPrefix(rawURL, "file://")
}

// redact hides the password of a URL for messages, also in a URL that
// does not parse.
func redact(rawURL string) string {
	if pass := urlPassword(rawURL); pass != "" {
		return strings.Replace(rawURL, ":"+pass+"@", ":xxxxx@", 1)
	}
	return rawURL
}

// urlPassword returns the password in scheme://user:password@host/…, or "".
func urlPassword(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		if u.User != nil {
			pass, _ := u.User.Password()
			return pass
		}
		return ""
	}
	_, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		if _, pass, ok := strings.Cut(rest[:i], ":"); ok {
			return pass
		}
	}
	return ""
}

// authorize adds credentials for the request's host, unless the URL
// carries its own (which net/http sends as basic authentication).
func authorize(req *http.Request) {
	if req.URL.User != nil || req.Header.Get("Authorization") != "" {
		return
	}
	host := req.URL.Hostname()
	if v := os.Getenv(authEnvName(host)); v != "" {
		if user, pass, ok := strings.Cut(v, ":"); ok {
			req.SetBasicAuth(user, pass)
		} else {
			req.Header.Set("Authorization", "Bearer "+v)
		}
		return
	}
	if user, pass, ok := netrcLookup(host); ok {
		req.SetBasicAuth(user, pass)
	}
}

// authEnvName returns the name of the credentials variable for host.
func authEnvName(host string) string {
	b := []byte(strings.ToUpper(host))
	for i, c := range b {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			b[i] = '_'
		}
	}
	return authEnvPrefix + string(b)
}

// netrcLookup returns the login and password for host from $NETRC or
// ~/.netrc, falling back to its default entry.
func netrcLookup(host string) (user, pass string, ok bool) {
	file := os.Getenv("NETRC")
	if file == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", "", false
		}
		file = filepath.Join(home, ".netrc")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", "", false
	}
	return parseNetrc(string(data), host)
}

// parseNetrc finds host's entry in netrc text: machine, default, login,
// password and account tokens; macdef bodies (up to an empty line) are
// skipped.
func parseNetrc(text, host string) (user, pass string, ok bool) {
	type entry struct{ login, password string }
	var cur, def *entry
	var found *entry
	lines := bufio.NewScanner(strings.NewReader(text))
	inMacro := false
	var tokens []string
	for lines.Scan() {
		line := lines.Text()
		if inMacro {
			inMacro = strings.TrimSpace(line) != ""
			continue
		}
		fields := strings.Fields(line)
		if i := indexOf(fields, "macdef"); i >= 0 {
			fields, inMacro = fields[:i], true
		}
		tokens = append(tokens, fields...)
	}
	for i := 0; i < len(tokens); i++ {
		next := func() string {
			if i+1 < len(tokens) {
				i++
				return tokens[i]
			}
			return ""
		}
		switch tokens[i] {
		case "machine":
			cur = &entry{}
			if next() == host && found == nil {
				found = cur
			}
		case "default":
			cur = &entry{}
			def = cur
		case "login":
			if v := next(); cur != nil {
				cur.login = v
			}
		case "password":
			if v := next(); cur != nil {
				cur.password = v
			}
		case "account":
			next()
		}
	}
	if found == nil {
		found = def
	}
	if found == nil || found.login == "" && found.password == "" {
		return "", "", false
	}
	return found.login, found.password, true
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
