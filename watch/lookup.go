package watch

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/internal/plainhttp"
)

// Looker looks upstream. It is safe for concurrent use.
type Looker struct {
	client   *http.Client
	rt       http.RoundTripper
	idle     time.Duration
	limits   Limits
	plain    plainhttp.Policy
	keychain authn.Keychain
	offline  bool
	git      string

	mu      sync.Mutex
	indexes map[string]*indexEntry
}

// Option configures a Looker.
type Option func(*Looker)

// WithTimeout sets the idle timeout of every look-up (default
// netdeadline.DefaultIdle); a whole answer is bounded by
// netdeadline.Budget, a git ls-remote by 20 times the idle timeout.
func WithTimeout(d time.Duration) Option { return func(l *Looker) { l.idle = d } }

// WithPlainHTTP says which OCI registries may be reached over plain
// HTTP (default none).
func WithPlainHTTP(p plainhttp.Policy) Option { return func(l *Looker) { l.plain = p } }

// WithKeychain sets the registry credentials (default the Docker config).
func WithKeychain(k authn.Keychain) Option { return func(l *Looker) { l.keychain = k } }

// WithOffline makes every look-up fail with ErrOffline (default false).
func WithOffline(off bool) Option { return func(l *Looker) { l.offline = off } }

// NewLooker returns a Looker configured by opts.
func NewLooker(opts ...Option) *Looker {
	l := &Looker{idle: netdeadline.DefaultIdle, keychain: authn.DefaultKeychain, git: "git", indexes: map[string]*indexEntry{}}
	for _, o := range opts {
		o(l)
	}
	l.limits = l.limits.withDefaults()
	l.rt = &boundedTransport{base: netdeadline.Transport(http.DefaultTransport, l.idle), limit: l.limits.Bytes}
	l.client = &http.Client{Transport: l.rt, CheckRedirect: checkRedirect}
	return l
}

// Lookup lists the versions of u and selects those its policy allows.
func (l *Looker) Lookup(ctx context.Context, u Upstream) (Selection, error) {
	if l.offline {
		return Selection{}, fmt.Errorf("%s: %w", Describe(u), ErrOffline)
	}
	p, err := compile(u.Versions)
	if err != nil {
		return Selection{}, err
	}
	var listed []Candidate
	switch {
	case u.Helm != nil:
		listed, err = l.helm(ctx, u.Helm)
	case u.OCI != nil:
		listed, err = l.oci(ctx, u.OCI)
	case u.Git != nil:
		listed, err = l.gitTags(ctx, u.Git)
	case u.GitHub != nil:
		listed, err = l.github(ctx, u.GitHub)
	case u.Listing != nil:
		listed, err = l.listing(ctx, u.Listing)
	}
	if err != nil {
		return Selection{}, fmt.Errorf("%s: %w", Describe(u), err)
	}
	if len(listed) > l.limits.Names {
		return Selection{}, fmt.Errorf("%s: lists %d names, more than the limit of %d: %w", Describe(u), len(listed), l.limits.Names, ErrTooLarge)
	}
	s := p.selectVersions(listed)
	if u.GitHub != nil && len(u.GitHub.Assets) > 0 {
		s = withAssets(s, u.GitHub.Assets)
	}
	return s, nil
}

// withAssets keeps the releases that carry every asset named.
func withAssets(s Selection, names []string) Selection {
	var kept []Candidate
	for _, c := range s.Allowed {
		ok := true
		for _, n := range names {
			if _, has := c.Assets[Expand(n, c, "")]; !has {
				ok = false
			}
		}
		if ok {
			kept = append(kept, c)
		} else {
			s.Refused++
		}
	}
	s.Allowed = kept
	return s
}

// Describe names an upstream in messages and tables.
func Describe(u Upstream) string {
	switch {
	case u.Helm != nil:
		return "helm " + redact(u.Helm.Repository) + " " + u.Helm.Chart
	case u.OCI != nil:
		return "oci " + u.OCI.Repository
	case u.Git != nil:
		return "git " + redact(u.Git.URL)
	case u.GitHub != nil:
		api := u.GitHub.API
		if api == "" {
			return "github " + u.GitHub.Repository
		}
		return "github " + u.GitHub.Repository + " at " + redact(api)
	case u.Listing != nil:
		return "listing " + redact(u.Listing.URL)
	}
	return "no upstream"
}

// boundedTransport bounds every response body to limit bytes and refuses
// a redirect response checkRedirect would refuse, for the look-ups of
// go-containerregistry as for kbuild's own.
type boundedTransport struct {
	base  http.RoundTripper
	limit int64
}

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if to, err := req.URL.Parse(loc); err == nil {
			next := req.Clone(req.Context())
			next.URL = to
			if err := checkRedirect(next, []*http.Request{req}); err != nil {
				resp.Body.Close()
				return nil, err
			}
		}
	}
	if resp.ContentLength > t.limit {
		resp.Body.Close()
		return nil, fmt.Errorf("%s %s: the server announces %d bytes, more than the limit of %d: %w", req.Method, req.URL.Redacted(), resp.ContentLength, t.limit, ErrTooLarge)
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.limit, what: req.Method + " " + req.URL.Redacted(), limit: t.limit}
	return resp, nil
}

// limitedBody fails a read past its limit with ErrTooLarge.
type limitedBody struct {
	rc interface {
		Read([]byte) (int, error)
		Close() error
	}
	left, limit int64
	what        string
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("%s: more than the limit of %d bytes: %w", b.what, b.limit, ErrTooLarge)
		}
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, fmt.Errorf("%s: more than the limit of %d bytes: %w", b.what, b.limit, ErrTooLarge)
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
