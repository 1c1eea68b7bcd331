package builder

import (
	"runtime"
	"time"

	"kbuild.dev/kbuild/sigbundle"
	"kbuild.dev/kbuild/trust"
)

// Option configures a Builder.
type Option func(*Builder)

// WithOutputDir sets where build records are written. Default "dist".
func WithOutputDir(dir string) Option { return func(b *Builder) { b.out = dir } }

// WithEpoch sets the time stamped into archives and manifests. Default the
// Unix epoch; callers pass SOURCE_DATE_EPOCH (see SourceDateEpoch).
func WithEpoch(t time.Time) Option { return func(b *Builder) { b.epoch = t.UTC() } }

// WithJobs sets how many recipes and charts are built at once. Default the
// number of CPUs.
func WithJobs(n int) Option {
	return func(b *Builder) {
		if n > 0 {
			b.jobs = n
		}
	}
}

// WithLogger sets where progress lines go. Default: nowhere.
func WithLogger(logf func(format string, args ...any)) Option {
	return func(b *Builder) { b.logf = logf }
}

// WithBuilderID sets the kbuild version recorded in BuildInfo. Default
// "kbuild".
func WithBuilderID(id string) Option { return func(b *Builder) { b.builderID = id } }

// WithBuilderSum sets the kbuild module hash (h1:…) recorded in BuildInfo
// beside the builder ID. Default: none (a kbuild built from a checkout).
func WithBuilderSum(sum string) Option { return func(b *Builder) { b.builderSum = sum } }

// WithRecipesRoot sets the directory recipe paths in BuildInfo are
// relative to, and whose git commit is recorded. Default: none (the
// recipe directory's base name is recorded and no commit).
func WithRecipesRoot(dir string) Option { return func(b *Builder) { b.root = dir } }

// WithCommit sets the git commit of the recipes repository recorded in
// BuildInfo. Default: none.
func WithCommit(c string) Option { return func(b *Builder) { b.commit = c } }

// WithKubeVersion renders charts against Kubernetes version v instead of
// the default (render.DefaultKubeVersion, or what a chart's kubeVersion allows).
// Default "".
func WithKubeVersion(v string) Option { return func(b *Builder) { b.kubeVersion = v } }

// WithUnpinnedImages reports images that are not pinned by digest as
// warnings instead of errors. Default false. Pinning needs the images'
// registries, so offline validation and builds allow it; publishing never
// does.
func WithUnpinnedImages(allow bool) Option { return func(b *Builder) { b.allowUnpinned = allow } }

// WithWorkDir builds each recipe in DIR/<package> and keeps it there for
// inspection (kubepkg build --work-dir); an existing DIR/<package> is
// replaced. Default: a temporary directory, removed after the build.
func WithWorkDir(dir string) Option { return func(b *Builder) { b.workDir = dir } }

// WithAdopt lets a build keep a chart that another tool (kubepkg, helm
// push) already published under the same version and build with other
// archive bytes, when its files are the same and its Chart.yaml means the
// same: the published manifest and archive digests go into the build
// record, and Result.Adopted says so. Otherwise such a chart fails the
// build naming the first differing file. Default false: a published tag
// with other content always fails the build.
func WithAdopt(adopt bool) Option { return func(b *Builder) { b.adopt = adopt } }

// WithChartSigners makes every chart a build publishes (pushed, reused or
// adopted) carry, as an OCI referrer, one Sigstore bundle per signer: the
// signature `cosign verify --key` and Flux's verify.provider: cosign check
// (package sigbundle), as publish attaches to its charts. Default none.
func WithChartSigners(signers ...trust.Signer) Option {
	return func(b *Builder) { b.chartSigners = append(b.chartSigners, signers...) }
}

// WithKeylessSigner makes every chart a build publishes also carry the
// keyless signature of s (a certificate for its OIDC identity and a
// transparency-log entry), which `cosign verify --certificate-identity`
// and Flux's verify.matchOIDCIdentity check. Default none.
func WithKeylessSigner(s sigbundle.KeylessSigner) Option {
	return func(b *Builder) { b.keyless = s }
}

func defaults() *Builder {
	return &Builder{
		out:       "dist",
		epoch:     time.Unix(0, 0).UTC(),
		jobs:      runtime.NumCPU(),
		logf:      func(string, ...any) {},
		builderID: "kbuild",
	}
}
