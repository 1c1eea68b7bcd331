package bundle

import (
	"context"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/internal/ocilimit"
	"kbuild.dev/kbuild/trust"
)

// Progress reports how far Create or Import is: bytes done of the total,
// and the artifact being copied.
type Progress struct {
	Artifact    string
	Done, Total int64
}

type options struct {
	plainHTTP   bool
	imageSource string
	platforms   []string
	epoch       time.Time
	now         time.Time
	progress    func(Progress)
	logf        func(string, ...any)
	maxBlob     int64
	resign      []trust.Signer
	timeout     time.Duration
	transport   http.RoundTripper
	nodeConfig  string
	trustedRoot []byte
}

// Option configures Create, Inspect and Import.
type Option func(*options)

// WithNodeConfig makes Import write, once everything is pushed, the
// containerd, Talos and CRI-O settings that send the images' registries
// to the mirror into dir (bundle/nodeconfig); default none.
func WithNodeConfig(dir string) Option { return func(o *options) { o.nodeConfig = dir } }

// WithPlainHTTP talks plain HTTP to registries (loopback registries).
// Default: HTTPS.
func WithPlainHTTP(b bool) Option { return func(o *options) { o.plainHTTP = b } }

// WithImageSource makes Create pull every image from HOST/PATH/<registry>/<repository>
// (the layout Import pushes to, so a mirror can feed the next air gap)
// instead of its own registry. Default: each image's own registry.
func WithImageSource(hostPath string) Option { return func(o *options) { o.imageSource = hostPath } }

// WithPlatforms keeps, of a multi-platform image index, only the images of
// these platforms ("linux/amd64", "linux/arm64/v8"); the index itself is
// kept byte for byte so its pinned digest still verifies. Default: every
// platform.
func WithPlatforms(p ...string) Option { return func(o *options) { o.platforms = p } }

// WithEpoch sets the bundle's creation time (SOURCE_DATE_EPOCH). Default:
// the index's generated time, so the same index gives the same bundle.
func WithEpoch(t time.Time) Option { return func(o *options) { o.epoch = t.UTC() } }

// WithProgress calls f as bytes are copied (at most every few MiB and at
// each artifact). Default: no reports.
func WithProgress(f func(Progress)) Option { return func(o *options) { o.progress = f } }

// WithLogger receives warnings and notes, one line each. Default: none.
func WithLogger(f func(string, ...any)) Option { return func(o *options) { o.logf = f } }

// WithResignKey makes Import also write SITE/mirror/index.yaml and its
// signature: the bundled versions with their chart references pointing at
// the mirror, signed by these keys, for sites that run their own root of
// trust. The upstream-signed index is written unchanged either way.
// Default: none.
func WithResignKey(s ...trust.Signer) Option { return func(o *options) { o.resign = s } }

// WithTimeout sets the idle timeout of every registry request, uploads
// and downloads alike: connecting, the TLS handshake, waiting for an
// answer and any gap in a transfer each take at most d, and a whole
// transfer is also bounded by its size (netdeadline.Budget). For Create
// it also bounds the site's files. Default: 60 s (responseTimeout) for
// registries, netdeadline.DefaultIdle (20 s) for the site.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// responseTimeout is the idle timeout of registry requests unless
// WithTimeout says otherwise.
const responseTimeout = 60 * time.Second

// remote returns the options of every registry request: the context, the
// default keychain's credentials and a transport that gives up on a
// registry that does not answer.
func (o *options) remote(ctx context.Context) []remote.Option {
	return []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain), remote.WithTransport(o.transport)}
}

func makeOptions(opts []Option) *options {
	o := &options{maxBlob: 64 << 30, logf: func(string, ...any) {}, progress: func(Progress) {}}
	for _, f := range opts {
		f(o)
	}
	idle := responseTimeout
	if o.timeout > 0 {
		idle = o.timeout
	}
	o.transport = ocilimit.Transport(netdeadline.Transport(remote.DefaultTransport, idle))
	if o.now.IsZero() {
		o.now = time.Now()
	}
	return o
}
