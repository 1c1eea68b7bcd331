package builder

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
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
}

// NewRegistryTarget returns a target for "oci://HOST[/PATH]". plainHTTP
// talks HTTP instead of HTTPS (for loopback registries in tests).
func NewRegistryTarget(url string, plainHTTP bool) (*RegistryTarget, error) {
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
	r := &RegistryTarget{base: base, plainHTTP: plainHTTP, keychain: authn.DefaultKeychain}
	r.SetTimeout(DefaultRegistryTimeout)
	return r, nil
}

// DefaultRegistryTimeout bounds how long a registry may take to start
// answering one request.
const DefaultRegistryTimeout = 60 * time.Second

// SetTimeout sets how long the registry may take to start answering each
// request (its response headers): a registry that stalls fails the request,
// which go-containerregistry retries a bounded number of times.
func (r *RegistryTarget) SetTimeout(d time.Duration) {
	t := remote.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = d
	r.transport = t
}

func (r *RegistryTarget) tag(repo, tag string) (name.Tag, error) {
	opts := []name.Option{name.StrictValidation}
	if r.plainHTTP {
		opts = append(opts, name.Insecure)
	}
	return name.NewTag(r.base+"/"+repo+":"+tag, opts...)
}

func (r *RegistryTarget) options(ctx context.Context) []remote.Option {
	return []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(r.keychain), remote.WithTransport(r.transport)}
}

// Repository implements Target.
func (r *RegistryTarget) Repository(repo string) string {
	return "oci://" + r.base + "/" + strings.SplitN(repo, "/", 2)[0]
}

// Base returns the registry and path charts are pushed under, HOST[/PATH].
func (r *RegistryTarget) Base() string { return r.base }

// Ref implements Target.
func (r *RegistryTarget) Ref(repo, tag string) string { return r.base + "/" + repo + ":" + tag }

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
	if err != nil {
		return v1.Hash{}, false, fmt.Errorf("registry %s: %w", r.base, err)
	}
	return desc.Digest, true, nil
}

// Push implements Target.
func (r *RegistryTarget) Push(ctx context.Context, repo, tag string, img v1.Image) error {
	t, err := r.tag(repo, tag)
	if err != nil {
		return err
	}
	if err := remote.Write(t, img, r.options(ctx)...); err != nil {
		return fmt.Errorf("push %s: %w", t, err)
	}
	return nil
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
type LayoutTarget struct {
	path layout.Path
	url  string
	mu   sync.Mutex
}

// NewLayoutTarget opens or creates the layout at dir. url is the base
// recorded in build records (DefaultLayoutURL when empty).
func NewLayoutTarget(dir, url string) (*LayoutTarget, error) {
	if url == "" {
		url = DefaultLayoutURL
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "index.json")); !os.IsNotExist(serr) {
			return nil, fmt.Errorf("oci layout %s: %w", dir, err)
		}
		if p, err = layout.Write(dir, empty.Index); err != nil {
			return nil, fmt.Errorf("oci layout %s: %w", dir, err)
		}
	}
	return &LayoutTarget{path: p, url: strings.TrimSuffix(url, "/")}, nil
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
	idx, err := l.path.ImageIndex()
	if err != nil {
		return v1.Hash{}, false, err
	}
	m, err := idx.IndexManifest()
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
	return l.path.AppendImage(img, layout.WithAnnotations(map[string]string{RefNameAnnotation: ref}))
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
	idx, err := l.path.ImageIndex()
	if err != nil {
		return err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, desc := range m.Manifests {
		if desc.Digest == d {
			return nil
		}
	}
	return l.path.AppendImage(img)
}
