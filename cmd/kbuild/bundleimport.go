package main

import (
	"context"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/bundle"
	"kbuild.dev/kbuild/cmd/kbuild/options"
)

func newBundleImportCmd() *Command {
	var (
		trusted    options.TrustFlags
		plainHTTP  bool
		timeout    time.Duration
		mirror     string
		site       string
		nodeConfig string
		resign     options.SignerFlags
	)
	return &Command{
		Use:     "import FILE (--public-key FILE... | --root-key FILE...) --mirror oci://HOST/PATH --site DIR [--node-config DIR] [--sign-key FILE]",
		Summary: "Verify a bundle with your keys, push it into a mirror and write the site and node settings.",
		Help: `Trusts only the keys given here, never anything in the bundle. Verifies
the bundled index as a subscriber does, then every chart and image blob
against the digests the signed index pins and every provenance file against
the index keys, and pushes nothing until all of it passed (SBOMs are not
signed: they are copied as information). An index older than the one DIR
already holds is refused as a rollback.

Then pushes each chart and image to HOST/PATH/<registry>/<repository> (blobs
the mirror has are skipped, blobs pushed to another repository are mounted),
writes DIR with the upstream-signed index unchanged plus mirror.json (where
each chart and image now lives), and with --node-config writes containerd
certs.d/<registry>/hosts.toml files, a Talos machine-config patch and a
CRI-O registries.conf.d drop-in that make nodes pull the pinned digests from
the mirror. With --sign-key it also writes DIR/mirror/index.yaml, the
bundled versions with chart references at the mirror, signed by your own
key, for sites that run their own root of trust.

Exit status: 0 imported; 4 a signature or digest refused, 3 a bad bundle
(nothing was pushed either way); 5 the mirror is unavailable; 1 the
mirror or site could not be written otherwise.

Examples:
  # verify and import, with the node settings
  kbuild bundle import virt.tar --public-key keys/index.pub --mirror oci://registry.airgap.local/upstream --site /srv/packages --node-config nodes/

  # under a root of trust, into a loopback registry
  kbuild bundle import virt.tar --root-key root1.pub --root-key root2.pub --root-threshold 2 --mirror oci://127.0.0.1:5000/mirror --site _site --plain-http

  # also publish an index signed by the site's own key, charts at the mirror
  kbuild bundle import virt.tar --public-key keys/index.pub --mirror oci://registry.airgap.local/upstream --site /srv/packages --sign-key keys/local.key`,
		Flags: func(fs *pflag.FlagSet) {
			trusted.AddFlags(fs)
			fs.StringVar(&mirror, "mirror", "", "mirror registry and path, oci://HOST/PATH (required)")
			fs.StringVar(&site, "site", "", "site directory `DIR` to write the index, its signature and mirror.json to (required)")
			fs.StringVar(&nodeConfig, "node-config", "", "directory `DIR` to write containerd, Talos and CRI-O settings to")
			resign.AddFlags(fs, "DIR/mirror/index.yaml, the index with chart references at the mirror")
			addAlias(fs, "resign-key", "", "sign-key")
			options.AddPlainHTTPFlag(fs, &plainHTTP, "for the mirror, and node settings then use http://")
			options.AddTimeoutFlag(fs, &timeout, "a mirror registry that does not start answering")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) != 1 || mirror == "" || site == "" {
				return usagef("import needs FILE, --mirror and --site")
			}
			trust, err := trusted.Require("import")
			if err != nil {
				return err
			}
			signers, err := resign.Signers(env)
			if err != nil {
				return err
			}
			opts := []bundle.Option{bundle.WithPlainHTTP(plainHTTP), bundle.WithTimeout(timeout), bundle.WithNodeConfig(nodeConfig), bundle.WithResignKey(signers...),
				bundle.WithProgress(bundle.ProgressTo(env.Stderr, options.Terminal(env)))}
			res, err := bundle.Import(ctx, args[0], trust, mirror, site, opts...)
			if res == nil {
				return refusal(env, err)
			}
			res.WriteNotes(env.Stderr, mirror, site)
			if err != nil {
				return err
			}
			return res.WriteText(env.Stdout, mirror, site)
		},
	}
}
