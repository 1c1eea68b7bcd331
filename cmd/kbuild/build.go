package main

import (
	"context"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/render"
	"kbuild.dev/kbuild/cmd/kbuild/options"
)

func newBuildCmd() *Command {
	var f options.BuildFlags
	var keys options.SignerFlags
	var kl options.KeylessFlags
	return &Command{
		Use:     "build DIR... [--registry oci://HOST/PATH] [-o DIST] [--sign-key FILE]...",
		Summary: "Build recipes into reproducible charts, push them and write build records.",
		Help: `Each DIR is a recipe directory or a directory of them. For every recipe,
build fetches and verifies the sources, assembles and packs each chart
byte-reproducibly (SOURCE_DATE_EPOCH sets the timestamps; default 1970),
checks the rendered charts against the recipe, pushes the charts to
<registry>/<package>/<chart>:<version>-<build> and writes
DIST/<name>-<version>-<build>.yaml (the build record that 'kbuild repo index'
reads) with a .build.yaml sidecar recording the resolved sources. With
--sign-key or --sign-key-env (the repository's index key), every chart
also carries its cosign signature as an OCI referrer (a Sigstore bundle),
as 'kbuild publish' signs its charts, so 'cosign verify --key index.pub
--insecure-ignore-tlog=true' and Flux's verify.provider: cosign pass. With
--keyless, in CI, each chart also carries a keyless signature: a Fulcio
certificate for the job's OIDC identity (in GitHub Actions the workflow
file at its ref; the job needs permissions id-token: write, or give a token
in KBUILD_OIDC_TOKEN) and a Rekor entry, which 'cosign verify
--certificate-identity … --certificate-oidc-issuer …' and Flux's
verify.matchOIDCIdentity check; --trusted-root (a private Sigstore's
trusted_root.json) verifies each before it is pushed.

A published version never changes: if the tag exists with the same content it
is reused; with different content the build fails and asks for a new build
number. Moving a repository from kubepkg, whose charts have other archive
bytes, pass --adopt: a published chart with the same files and the same
Chart.yaml meaning is kept, with its published digests in the build record
(and said so); one that differs is refused, naming the first differing
file. Nothing is pushed for a recipe until all its charts are checked.
With --offline every source must be in the cache, and images not yet pinned
by digest are warnings rather than errors (pinning needs their registries;
'kbuild publish' always requires them). Without --registry (or
$KBUILD_REGISTRY) charts go into the local OCI layout DIST/oci, which
skopeo, crane and 'kbuild serve' read. Credentials come from the Docker
config and credential helpers, or from --registry-config FILE. The flags of
'kubepkg build' work with its meaning: --work-dir DIR keeps each recipe's
build in DIR/<package> for inspection, --cache-dir, --plain-http,
--registry and -o as above.

Examples:
  # build the examples into dist/ and the local layout dist/oci (no network)
  kbuild build examples/

  # build and push to a registry on loopback
  kbuild build recipes/kubevirt --registry oci://127.0.0.1:5000/packages --plain-http

  # push charts signed for cosign with the repository's key
  kbuild build recipes/ --registry oci://ghcr.io/example/packages --sign-key-env KBUILD_SIGN_KEY

  # in GitHub Actions (permissions id-token: write): also sign keylessly
  kbuild build recipes/ --registry oci://ghcr.io/example/packages --sign-key-env KBUILD_SIGN_KEY --keyless

  # take over charts kubepkg already pushed for these versions and builds
  kbuild build recipes/ --registry oci://ghcr.io/example/packages --adopt

  # rebuild from the cache only, as a CI job restoring its cache does
  kbuild build --offline recipes/`,
		Flags: func(fs *pflag.FlagSet) {
			f.AddFlags(fs)
			f.AddPublishFlags(fs)
			keys.AddFlags(fs, "each chart pushed, for cosign")
			kl.AddFlags(fs)
		},
		Args: minArgs(1, "name at least one recipe directory"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			signers, err := keys.Signers(env)
			if err != nil {
				return err
			}
			ks, err := kl.Signer(ctx, env)
			if err != nil {
				return err
			}
			dirs, err := builder.FindRecipes(args)
			if err != nil {
				return err
			}
			t, err := f.Target(env)
			if err != nil {
				return err
			}
			b, err := f.Builder(env, thisKbuild(), t, builder.CommonRoot(dirs), builder.WithUnpinnedImages(f.Offline), builder.WithChartSigners(signers...), builder.WithKeylessSigner(ks))
			if err != nil {
				return err
			}
			// Building allocates much short-lived data (archives, parsed
			// documents): collecting less often saved a sixth of the CPU
			// time of building 20 charts (bench/README.md).
			tuneGC(env)
			results, err := b.Build(ctx, dirs)
			render.StopWorkers()
			return reportBuilds(env, results, err, func(d string) string { return d }, "")
		},
	}
}
