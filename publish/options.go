package publish

import (
	"errors"
	"fmt"
	"io"
	"time"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/sigbundle"
	"kbuild.dev/kbuild/site"
	"kbuild.dev/kbuild/sources"
	"kbuild.dev/kbuild/trust"
)

// Publisher publishes into one site. Make it with New.
type Publisher struct {
	site       string
	merge      string
	trust      *trust.Trust
	allowNew   bool
	signers    []trust.Signer
	generated  time.Time
	expires    time.Duration
	timeout    time.Duration
	root       string
	title      string
	scanReport string
	rebuild    bool
	distDir    string
	builder    *builder.Builder
	target     oci.Target
	fetcher    *sources.Fetcher
	plainHTTP  bool
	moves      map[string]string
	pin        dist.Pinner
	tool       [2]string
	epoch      time.Time
	getenv     func(string) string
	display    func(string) string
	report     func([]*builder.Result, error) error
	stdout     io.Writer
	stderr     io.Writer
	suites     *site.Suites
	keep       int
	keyless    sigbundle.KeylessSigner
}

// InputError is an error about one input of a job: Input names it
// ("reason" for Withdraw's, "relocate" for WithRelocate's moves, "root"
// for WithRoot's file, "suite" for suite.SiteDir's name), and a
// command says which flag gave it; the message does not.
type InputError struct {
	Input string
	Err   error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// InputName returns Input.
func (e *InputError) InputName() string { return e.Input }

// Option configures New.
type Option func(*Publisher)

// WithSite sets the site directory (default _site).
func WithSite(dir string) Option { return func(p *Publisher) { p.site = dir } }

// WithMerge makes the index at ref (a path or an http(s) URL) the base,
// verified with trust, instead of the index in the site directory; with
// allowNew a missing base starts a new repository.
func WithMerge(ref string, trust *trust.Trust, allowNew bool) Option {
	return func(p *Publisher) { p.merge, p.trust, p.allowNew = ref, trust, allowNew }
}

// WithSigners sets the keys that sign the index and the provenance; the
// first signs provenance. Without WithMerge, an index already in the site
// is verified with them.
func WithSigners(s ...trust.Signer) Option { return func(p *Publisher) { p.signers = s } }

// WithKeyless makes every chart the publish signs also carry the keyless
// Sigstore bundles of s (signature, SBOM and provenance attestations with
// a certificate for s's OIDC identity, logged in a transparency log)
// beside the key-signed ones, and the site name that identity
// (sitelayout.KeylessFile) for the catalog's Flux and cosign snippets.
// The index is still signed by the signers. Default none.
func WithKeyless(s sigbundle.KeylessSigner) Option { return func(p *Publisher) { p.keyless = s } }

// WithGenerated sets the index's generated time (default now).
func WithGenerated(t time.Time) Option { return func(p *Publisher) { p.generated = t } }

// WithExpires sets how long after generated the index expires (default 30
// days; 0 for never).
func WithExpires(d time.Duration) Option { return func(p *Publisher) { p.expires = d } }

// WithTimeout sets the timeout of each HTTP request for the base (default
// 60 s).
func WithTimeout(d time.Duration) Option { return func(p *Publisher) { p.timeout = d } }

// WithRoot publishes the root of trust in file beside the index, with the
// versions before it from root/<N>.yaml in its directory.
func WithRoot(file string) Option { return func(p *Publisher) { p.root = file } }

// WithSuites makes the site one suite of several, s.This: each version
// on the catalog's package pages says which suites hold that build and
// which withdrew it (site.WithSuites). The default is none.
func WithSuites(s *site.Suites) Option { return func(p *Publisher) { p.suites = s } }

// WithTitle sets the catalog's title.
func WithTitle(t string) Option { return func(p *Publisher) { p.title = t } }

// WithScanReport publishes the kbuild scan report in file as scan.json.
func WithScanReport(file string) Option { return func(p *Publisher) { p.scanReport = file } }

// WithRebuild rebuilds published versions too; their digests must not
// change.
func WithRebuild(on bool) Option { return func(p *Publisher) { p.rebuild = on } }

// WithBuilder sets what builds and pushes the recipes for Publish
// (required by Publish, with WithTarget; default none).
func WithBuilder(b *builder.Builder) Option { return func(p *Publisher) { p.builder = b } }

// WithTarget sets where Publish pushes the charts and attaches their
// referrers (required by Publish; default none). A target that also
// implements Mirror gets the recipes' image sources copied into it.
func WithTarget(t oci.Target) Option { return func(p *Publisher) { p.target = t } }

// WithDist sets the directory of the builder's build records (default
// "": none, and no stale record is warned about).
func WithDist(dir string) Option { return func(p *Publisher) { p.distDir = dir } }

// WithFetcher sets what mirrors the image sources into a Mirror target
// (default none: a build with an image source and a Mirror target is an
// error).
func WithFetcher(f *sources.Fetcher) Option { return func(p *Publisher) { p.fetcher = f } }

// WithPlainHTTP allows plain HTTP to loopback registries, for the
// mirrored images and the relocated charts (default false).
func WithPlainHTTP(on bool) Option { return func(p *Publisher) { p.plainHTTP = on } }

// WithProvenance sets what provenance and SBOMs say about the builder:
// the tool's name and version, SOURCE_DATE_EPOCH and the environment
// (for the CI identity).
func WithProvenance(tool, version string, epoch time.Time, getenv func(string) string) Option {
	return func(p *Publisher) { p.tool, p.epoch, p.getenv = [2]string{tool, version}, epoch, getenv }
}

// WithReport sets what prints the results of the builds and turns build
// failures into the error Publish returns; display maps a recipe
// directory to how messages show it.
func WithReport(report func([]*builder.Result, error) error, display func(string) string) Option {
	return func(p *Publisher) { p.report, p.display = report, display }
}

// WithRelocate moves the charts of the base's versions from one registry
// path to another (oci://OLD to oci://NEW); Index checks that each moved
// chart is at its new place with its published digest (WithPlainHTTP for
// loopback registries) before it writes anything. The default is none.
func WithRelocate(moves map[string]string) Option {
	return func(p *Publisher) { p.moves = moves }
}

// WithChartPinner makes Index pin, with pin, the charts that records name
// without a digest (as kubepkg repo index does); without it such a record
// is refused.
func WithChartPinner(pin dist.Pinner) Option { return func(p *Publisher) { p.pin = pin } }

// WithOutput sets where results (stdout) and warnings (stderr) go
// (default: discarded; so is a nil writer's).
func WithOutput(stdout, stderr io.Writer) Option {
	return func(p *Publisher) {
		if stdout != nil {
			p.stdout = stdout
		}
		if stderr != nil {
			p.stderr = stderr
		}
	}
}

// New returns a Publisher. It checks what it is given: every signer must
// give its public key (trust.CheckSigner), and a builder needs a target
// to push into; what a job needs is checked by the job (Publish needs a
// builder and a signer, Withdraw a signer).
func New(opts ...Option) (*Publisher, error) {
	p := &Publisher{
		site: "_site", expires: 30 * 24 * time.Hour, timeout: 60 * time.Second,
		tool: [2]string{"kbuild", "devel"}, getenv: func(string) string { return "" },
		display: func(s string) string { return s }, stdout: io.Discard, stderr: io.Discard,
		keep: DefaultSiteKeep,
	}
	for _, o := range opts {
		o(p)
	}
	if p.generated.IsZero() {
		p.generated = time.Now()
	}
	p.generated = p.generated.UTC().Truncate(time.Second)
	for i, s := range p.signers {
		if err := trust.CheckSigner(s); err != nil {
			return nil, fmt.Errorf("signing key %d of %d: %w", i+1, len(p.signers), err)
		}
	}
	if p.builder != nil && p.target == nil {
		return nil, errors.New("publish: a builder needs a target to push into (WithTarget)")
	}
	if p.report == nil {
		p.report = func(_ []*builder.Result, err error) error { return err }
	}
	return p, nil
}

func (p *Publisher) warnf(format string, args ...any) {
	fmt.Fprintf(p.stderr, "warning: "+format+"\n", args...)
}

func (p *Publisher) printf(format string, args ...any) {
	fmt.Fprintf(p.stdout, format+"\n", args...)
}

// expiry returns the index's expiry time, zero for none: WithExpires
// after generated or, when fresh, after now if that is later — a publish
// that re-signs the same versions at the same SOURCE_DATE_EPOCH still
// renews the expiry.
func (p *Publisher) expiry(fresh bool) time.Time {
	if p.expires <= 0 {
		return time.Time{}
	}
	from := p.generated
	if n := now().UTC().Truncate(time.Second); fresh && n.After(from) {
		from = n
	}
	return from.Add(p.expires)
}

// baseTrust returns what verifies the base: the WithMerge trust, or the
// signing keys for an index already in the site (only what we signed is
// extended).
func (p *Publisher) baseTrust() *trust.Trust {
	if p.merge != "" {
		return p.trust
	}
	return trust.SignedBy(p.signers...)
}
