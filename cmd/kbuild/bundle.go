package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/bundle"
	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/trust"
)

func newBundleCmd() *Command {
	return &Command{
		Use:     "bundle COMMAND",
		Summary: "Air-gap bundles: the signed index, charts and images in one verified file.",
		Help: `A bundle is one file, an OCI image layout in a tar (skopeo, crane and oras
read it), holding a signed index.yaml with its signature and root chain, the
charts and every pinned image of the chosen package versions, and their
SBOMs and provenance. 'create' makes it where the internet is, 'import'
verifies it with keys you carry separately and fills a mirror registry
inside the air gap.`,
		Subcommands: []*Command{newBundleCreateCmd(), newBundleInspectCmd(), newBundleImportCmd()},
	}
}

func newBundleCreateCmd() *Command {
	var (
		index       options.IndexFlags
		plainHTTP   bool
		timeout     time.Duration
		out         string
		platforms   []string
		imageSource string
		trustedRoot string
	)
	return &Command{
		Use:     "create PACKAGE[@CONSTRAINT]... --index REF (--public-key FILE... | --root-key FILE... [--root-threshold N]) -o FILE [--platform OS/ARCH...]",
		Summary: "Write one bundle file with the packages, everything they require, their charts and images.",
		Help: `Verifies the index exactly as 'kbuild repo verify' does, then chooses for
each PACKAGE the newest version satisfying CONSTRAINT and, the same way,
every package its variants require (meta packages included; optional ones
when the index has them). Every chart and image those versions pin is
streamed from its registry into FILE with its digest checked; multi-platform
images are kept whole unless --platform picks some (the index itself is
kept, so its pinned digest still verifies, but a mirror that requires every
image an index names, as docker-registry does, refuses it). FILE is written to a temporary
file and renamed. The same index and packages give the same bytes: the
bundle's time is SOURCE_DATE_EPOCH, else the index's generated time.

The charts' cosign signatures travel with them (pushed by import as
referrers of the mirrored charts): those signed by the index's keys, and
with --trusted-root (the Sigstore trusted_root.json, e.g. from 'cosign
trusted-root create' or the public instance's TUF repository) the keyless
ones that verify for the identity the site names (keys/keyless.json);
the trusted root and identity travel too, and import checks them again.

The mistake to avoid: a bundle verified with keys that travel inside it
proves nothing; carry the public keys to the air gap separately.

Examples:
  # KubeVirt with CDI, for every platform
  kbuild bundle create virtualization --index https://example.github.io/packages/ --public-key keys/index.pub -o virt.tar

  # an exact version, amd64 images only
  kbuild bundle create kubevirt@1.9.0 --index _site --public-key keys/index.pub --platform linux/amd64 -o kubevirt.tar

  # read the images from a mirror filled by an earlier import
  kbuild bundle create cdi@~1.66 --index _site --root-key keys/root.pub --image-source oci://mirror.local/airgap -o cdi.tar`,
		Flags: func(fs *pflag.FlagSet) {
			index.AddFlags(fs, "to bundle packages of (required)")
			options.AddOutputFlag(fs, &out, "", "the bundle to `FILE` (required)")
			fs.StringArrayVar(&platforms, "platform", nil, "keep only this platform of multi-platform images (os/arch[/variant]); repeat for several")
			fs.StringVar(&imageSource, "image-source", "", "pull images from oci://HOST/PATH/<registry>/<repository> instead of their registries")
			fs.StringVar(&trustedRoot, "trusted-root", "", "Sigstore trusted_root.json `FILE` to verify and carry the charts' keyless signatures with (for the identity the site names)")
			options.AddPlainHTTPFlag(fs, &plainHTTP, "")
			options.AddTimeoutFlag(fs, &timeout, "the site, or a registry that does not start answering,")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) == 0 || index.Ref == "" || out == "" {
				return usagef("create needs PACKAGE..., --index and -o")
			}
			trust, err := index.Require("create")
			if err != nil {
				return err
			}
			wants, err := bundle.ParseWants(args)
			if err != nil {
				return usagef("%v", err)
			}
			opts := []bundle.Option{bundle.WithPlainHTTP(plainHTTP), bundle.WithTimeout(timeout), bundle.WithPlatforms(platforms...), bundle.WithImageSource(imageSource),
				bundle.WithLogger(env.Warnf), bundle.WithProgress(bundle.ProgressTo(env.Stderr, options.Terminal(env)))}
			if trustedRoot != "" {
				data, err := os.ReadFile(trustedRoot)
				if err != nil {
					return err
				}
				opts = append(opts, bundle.WithTrustedRoot(data))
			}
			if env.Getenv("SOURCE_DATE_EPOCH") != "" {
				t, err := epochOrNow(env)
				if err != nil {
					return err
				}
				opts = append(opts, bundle.WithEpoch(t))
			}
			c, err := bundle.Create(ctx, out, index.Ref, trust, wants, opts...)
			if err != nil {
				return refusal(env, err)
			}
			return c.WriteText(env.Stdout, env.Stderr, out)
		},
	}
}

// refusal prints a verification refusal (exit 4) or bad bundle (exit 3)
// as "refused: …"; other errors are returned as they are (exitCode: 5 for
// a registry unavailable).
func refusal(env *Env, err error) error {
	var ve *trust.VerificationError
	if errors.As(err, &ve) || errors.Is(err, bundle.ErrBadBundle) {
		fmt.Fprintf(env.Stderr, "refused: %v\n", err)
		return &exitError{Code: exitCode(err)}
	}
	return err
}
