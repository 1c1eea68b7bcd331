package oci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/internal/ocilimit"
)

// RefNameAnnotation names an image in an OCI layout's index.json.
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// Target is where built charts are published: a remote registry or a local
// OCI image layout. repo is relative to the target, "<package>/<chart>".
type Target interface {
	// Repository returns the OCI repository URL recorded in build records
	// for repo, e.g. "oci://ghcr.io/org/packages/kubevirt".
	Repository(repo string) string
	// Ref returns the full reference of repo:tag for messages.
	Ref(repo, tag string) string
	// Lookup returns the manifest digest stored at repo:tag, or ok false
	// when the tag does not exist.
	Lookup(ctx context.Context, repo, tag string) (digest v1.Hash, ok bool, err error)
	// Image returns the image stored at repo:tag (see Lookup).
	Image(ctx context.Context, repo, tag string) (v1.Image, error)
	// Push stores img at repo:tag.
	Push(ctx context.Context, repo, tag string, img v1.Image) error
	// PushReferrer stores img, whose manifest names a subject, by digest in
	// repo, so that it is listed among the subject's referrers.
	PushReferrer(ctx context.Context, repo string, img v1.Image) error
}

var (
	_ Target = (*RegistryTarget)(nil)
	_ Target = (*LayoutTarget)(nil)
)

// RegistryTarget publishes to a remote OCI registry with
// go-containerregistry, using the Docker config and credential helpers.
type RegistryTarget struct {
	base      string // host[/path], no scheme
	plainHTTP bool
	keychain  authn.Keychain
	transport http.RoundTripper

	mu     sync.Mutex
	shared http.RoundTripper // see sharedTransport
	plain  bool              // the registry asks for no bearer token
}

// RegistryOption configures a RegistryTarget.
type RegistryOption func(*RegistryTarget)

// WithKeychain sets where registry credentials come from. Default
// authn.DefaultKeychain (the Docker config and credential helpers).
func WithKeychain(k authn.Keychain) RegistryOption {
	return func(r *RegistryTarget) { r.keychain = k }
}

// lookupAttempts is how many times a request to a registry is made when it
// answers 429 or 5xx or the connection fails (go-containerregistry's default
// too).
const lookupAttempts = 3

// WithRegistryTimeout sets how long the registry may stay silent (see
// SetTimeout), on lookups and pushes alike: kbuild passes --timeout.
// Default DefaultRegistryTimeout.
func WithRegistryTimeout(d time.Duration) RegistryOption {
	return func(r *RegistryTarget) {
		if d > 0 {
			r.SetTimeout(d)
		}
	}
}

// NewRegistryTarget returns a target for "oci://HOST[/PATH]". plainHTTP
// talks HTTP instead of HTTPS (for loopback registries in tests).
func NewRegistryTarget(url string, plainHTTP bool, ropts ...RegistryOption) (*RegistryTarget, error) {
	base, ok := strings.CutPrefix(url, "oci://")
	if !ok {
		return nil, fmt.Errorf("registry %q: expected oci://HOST/PATH", url)
	}
	base = strings.TrimSuffix(base, "/")
	opts := []name.Option{name.StrictValidation}
	if plainHTTP {
		opts = append(opts, name.Insecure)
	}
	if _, err := name.NewRepository(base+"/x", opts...); err != nil {
		return nil, fmt.Errorf("registry %q: %w", url, err)
	}
	t := &RegistryTarget{base: base, plainHTTP: plainHTTP, keychain: authn.DefaultKeychain}
	t.SetTimeout(DefaultRegistryTimeout)
	for _, o := range ropts {
		o(t)
	}
	return t, nil
}

// DefaultRegistryTimeout bounds how long a registry may take to start
// answering one request, or stay silent in one: --timeout's default.
const DefaultRegistryTimeout = netdeadline.DefaultIdle

// SetTimeout sets how long the registry may stay silent: to connect, to
// start answering a request (its response headers), and in any gap of an
// upload or a download, whose whole time is also bounded by its size
// (netdeadline.Budget). A registry that stalls fails the request, which
// go-containerregistry retries a bounded number of times.
func (r *RegistryTarget) SetTimeout(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.transport = ocilimit.Transport(netdeadline.Transport(remote.DefaultTransport, d))
	r.shared, r.plain = nil, false
}

func (r *RegistryTarget) tag(repo, tag string) (name.Tag, error) {
	opts := []name.Option{name.StrictValidation}
	if r.plainHTTP {
		opts = append(opts, name.Insecure)
	}
	return name.NewTag(r.base+"/"+repo+":"+tag, opts...)
}

func (r *RegistryTarget) options(ctx context.Context) []remote.Option {
	if t := r.sharedTransport(ctx); t != nil {
		return []remote.Option{remote.WithContext(ctx), remote.WithTransport(t)}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(r.keychain), remote.WithTransport(r.transport)}
}

// sharedTransport returns one authenticated transport for every request to
// a registry that wants no bearer token (anonymous or basic auth, such as
// a registry on loopback), or nil for one that does. go-containerregistry
// otherwise pings the registry before every lookup and push, and for a
// plain-HTTP registry each ping first tries TLS: two pings and two failed
// TLS handshakes per chart. A bearer token is scoped to one repository and
// to pull or push, so those registries keep a transport per call as
// go-containerregistry makes it. A failed ping returns nil, and the
// request that follows reports the error.
func (r *RegistryTarget) sharedTransport(ctx context.Context) http.RoundTripper {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shared != nil || r.plain {
		return r.shared
	}
	opts := []name.Option{name.StrictValidation}
	if r.plainHTTP {
		opts = append(opts, name.Insecure)
	}
	reg, err := name.NewRegistry(strings.SplitN(r.base, "/", 2)[0], opts...)
	if err != nil {
		return nil
	}
	ch, err := transport.Ping(ctx, reg, r.transport)
	if err != nil {
		return nil
	}
	if strings.EqualFold(ch.Scheme, "bearer") {
		r.plain = true // not shareable; remember, so as not to ask again
		return nil
	}
	auth, err := r.keychain.Resolve(reg)
	if err != nil {
		return nil
	}
	// What go-containerregistry wraps a transport in unless it is already
	// authenticated (remote.WithTransport): retries of network errors and
	// of the status codes registries answer when they are busy.
	inner := transport.NewRetry(r.transport,
		transport.WithRetryBackoff(remote.Backoff{Duration: time.Second, Factor: 3, Jitter: 0.1, Steps: lookupAttempts}),
		transport.WithRetryPredicate(retryable),
		transport.WithRetryStatusCodes(http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout))
	t, err := transport.NewWithContext(ctx, reg, auth, inner, nil)
	if err != nil {
		return nil
	}
	r.shared = t
	return t
}

// retryable reports whether a request that failed with err is worth
// repeating: a temporary network error, or a connection cut short (as
// go-containerregistry decides by default).
func retryable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	var temp interface{ Temporary() bool }
	if errors.As(err, &temp) && temp.Temporary() {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)
}

// Repository implements Target.
func (r *RegistryTarget) Repository(repo string) string {
	return "oci://" + r.base + "/" + strings.SplitN(repo, "/", 2)[0]
}

// Base returns the registry and path charts are pushed under, HOST[/PATH].
func (r *RegistryTarget) Base() string { return r.base }

// Ref implements Target.
func (r *RegistryTarget) Ref(repo, tag string) string { return r.base + "/" + repo + ":" + tag }

// Image implements Target.
func (r *RegistryTarget) Image(ctx context.Context, repo, tag string) (v1.Image, error) {
	t, err := r.tag(repo, tag)
	if err != nil {
		return nil, err
	}
	return remote.Image(t, r.options(ctx)...)
}

// Lookup implements Target.
func (r *RegistryTarget) Lookup(ctx context.Context, repo, tag string) (v1.Hash, bool, error) {
	t, err := r.tag(repo, tag)
	if err != nil {
		return v1.Hash{}, false, err
	}
	desc, err := remote.Head(t, r.options(ctx)...)
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return v1.Hash{}, false, nil
	}
	if errors.As(err, &terr) && (terr.StatusCode >= 500 || terr.StatusCode == http.StatusTooManyRequests) {
		return v1.Hash{}, false, fmt.Errorf("registry %s: look up %s: %w; the registry kept failing though each request was retried %d times with backoff: it is overloaded or down, so run again later or check its status (nothing was pushed or published)", r.base, t, err, lookupAttempts-1)
	}
	if err != nil {
		return v1.Hash{}, false, fmt.Errorf("registry %s: %w", r.base, err)
	}
	return desc.Digest, true, nil
}

// Push implements Target. Publish looks every tag up before it pushes, so
// with a shared transport (see sharedTransport) the blobs are uploaded and
// the manifest put without remote.Write's second look at the tag; pushing
// the same manifest again rewrites the same bytes.
func (r *RegistryTarget) Push(ctx context.Context, repo, tag string, img v1.Image) error {
	t, err := r.tag(repo, tag)
	if err != nil {
		return err
	}
	if r.sharedTransport(ctx) == nil {
		err = remote.Write(t, img, r.options(ctx)...)
	} else {
		err = putImage(t, img, r.options(ctx))
	}
	if err != nil {
		return fmt.Errorf("push %s: %w", t, err)
	}
	return nil
}

// putImage uploads the config and layers of img that the repository of t
// lacks, then puts its manifest at t.
func putImage(t name.Tag, img v1.Image, opts []remote.Option) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	config, err := partial.ConfigLayer(img)
	if err != nil {
		return err
	}
	for _, l := range append([]v1.Layer{config}, layers...) {
		if err := remote.WriteLayer(t.Context(), l, opts...); err != nil {
			return err
		}
	}
	return remote.Put(t, img, opts...)
}

// PushReferrer implements Target. Registries without the referrers API get
// the tag fallback scheme (sha256-<subject hex>), which go-containerregistry
// maintains.
func (r *RegistryTarget) PushReferrer(ctx context.Context, repo string, img v1.Image) error {
	t, err := r.tag(repo, "latest")
	if err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	ref := t.Context().Digest(d.String())
	if err := remote.Write(ref, img, r.options(ctx)...); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	return nil
}

// DefaultLayoutURL is the base recorded for charts built into a local
// layout: where `kbuild serve` serves that layout.
const DefaultLayoutURL = "oci://127.0.0.1:8080"

// LayoutTarget publishes into a local OCI image layout (dist/oci), readable
// by skopeo, crane and `kbuild serve`. Images are named in index.json with
// the annotation org.opencontainers.image.ref.name = "<repo>:<tag>".
//
// index.json lists the manifests sorted by name, then digest (unnamed
// referrers after a name's image, by digest), so that two identical builds
// write identical layouts whatever order their charts finish in. The layout
// is created by the first push: a build that fails before pushing leaves no
// empty layout behind.
type LayoutTarget struct {
	path    layout.Path
	url     string
	mu      sync.Mutex
	present bool // the layout exists on disk
}

// NewLayoutTarget opens the layout at dir, or prepares to create it at the
// first push. url is the base recorded in build records (DefaultLayoutURL
// when empty).
func NewLayoutTarget(dir, url string) (*LayoutTarget, error) {
	if url == "" {
		url = DefaultLayoutURL
	}
	l := &LayoutTarget{path: layout.Path(dir), url: strings.TrimSuffix(url, "/")}
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err == nil {
		if _, err := layout.FromPath(dir); err != nil {
			return nil, fmt.Errorf("oci layout %s: %w", dir, err)
		}
		l.present = true
	} else if !os.IsNotExist(err) {
		return nil, fmt.Errorf("oci layout %s: %w", dir, err)
	}
	return l, nil
}

// create writes the empty layout unless it exists.
func (l *LayoutTarget) create() error {
	if l.present {
		return nil
	}
	if _, err := layout.Write(string(l.path), empty.Index); err != nil {
		return fmt.Errorf("oci layout %s: %w", l.path, err)
	}
	l.present = true
	return nil
}

// index returns the layout's index.json (nil manifests before the first
// push).
func (l *LayoutTarget) index() (*v1.IndexManifest, error) {
	if !l.present {
		return &v1.IndexManifest{}, nil
	}
	idx, err := l.path.ImageIndex()
	if err != nil {
		return nil, err
	}
	return idx.IndexManifest()
}

// appendSorted adds img to the layout and rewrites index.json sorted.
func (l *LayoutTarget) appendSorted(img v1.Image, opts ...layout.Option) error {
	if err := l.create(); err != nil {
		return err
	}
	if err := l.path.AppendImage(img, opts...); err != nil {
		return err
	}
	m, err := l.index()
	if err != nil {
		return err
	}
	slices.SortStableFunc(m.Manifests, func(a, b v1.Descriptor) int {
		an, bn := a.Annotations[RefNameAnnotation], b.Annotations[RefNameAnnotation]
		if (an == "") != (bn == "") {
			if an == "" {
				return 1
			}
			return -1
		}
		if c := strings.Compare(an, bn); c != 0 {
			return c
		}
		return strings.Compare(a.Digest.String(), b.Digest.String())
	})
	data, err := json.MarshalIndent(m, "", "   ") // as ggcr's layout writes it
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(string(l.path), "index.json"), data, 0o644)
}

// Repository implements Target.
func (l *LayoutTarget) Repository(repo string) string {
	return l.url + "/" + strings.SplitN(repo, "/", 2)[0]
}

// Ref implements Target.
func (l *LayoutTarget) Ref(repo, tag string) string {
	return string(l.path) + "#" + repo + ":" + tag
}

// Lookup implements Target.
func (l *LayoutTarget) Lookup(ctx context.Context, repo, tag string) (v1.Hash, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lookup(repo + ":" + tag)
}

func (l *LayoutTarget) lookup(ref string) (v1.Hash, bool, error) {
	m, err := l.index()
	if err != nil {
		return v1.Hash{}, false, err
	}
	for _, d := range m.Manifests {
		if d.Annotations[RefNameAnnotation] == ref {
			return d.Digest, true, nil
		}
	}
	return v1.Hash{}, false, nil
}

// Image implements Target.
func (l *LayoutTarget) Image(ctx context.Context, repo, tag string) (v1.Image, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok, err := l.lookup(repo + ":" + tag)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("oci layout %s: no %s:%s", l.path, repo, tag)
	}
	return l.path.Image(d)
}

// Push implements Target. Pushing the same content again is a no-op.
func (l *LayoutTarget) Push(ctx context.Context, repo, tag string, img v1.Image) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	ref := repo + ":" + tag
	d, err := img.Digest()
	if err != nil {
		return err
	}
	if have, ok, err := l.lookup(ref); err != nil {
		return err
	} else if ok && have == d {
		return nil
	} else if ok {
		return fmt.Errorf("oci layout %s: %s already holds %s", l.path, ref, have)
	}
	return l.appendSorted(img, layout.WithAnnotations(map[string]string{RefNameAnnotation: ref}))
}

// PushReferrer implements Target: the image is added to the layout's index
// without a name (a reader finds it through its subject field).
func (l *LayoutTarget) PushReferrer(ctx context.Context, repo string, img v1.Image) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	d, err := img.Digest()
	if err != nil {
		return err
	}
	m, err := l.index()
	if err != nil {
		return err
	}
	for _, desc := range m.Manifests {
		if desc.Digest == d {
			return nil
		}
	}
	return l.appendSorted(img)
}
