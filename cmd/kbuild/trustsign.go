package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

func newTrustRootSignCmd() *Command {
	var keys options.SignerFlags
	return &Command{
		Use:     "sign ROOT.yaml --sign-key FILE",
		Summary: "Add one root key's signature to a root.",
		Help: `Signs the root's signed content with the private key --sign-key (or each of
several, or the one in --sign-key-env) and writes the
root back (and root/<N>.yaml beside it, when it holds the same version),
replacing an earlier signature by the same key. A new version needs a
threshold of its own root keys and of the previous version's; a key that is
in neither only adds a signature no one counts.

Examples:
  # each root key holder signs in turn
  kbuild trust root sign _site/root.yaml --sign-key keys/root1.key
  kbuild trust root sign _site/root.yaml --sign-key keys/root2.key`,
		Flags: func(fs *pflag.FlagSet) {
			keys.AddFlags(fs, "the root")
			addAlias(fs, "key", "", "sign-key")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) != 1 || !keys.Given() {
				return usagef("root sign takes ROOT.yaml and --sign-key FILE")
			}
			signers, err := keys.Signers(env)
			if err != nil {
				return err
			}
			r, err := siteread.SignRootFile(args[0], signers...)
			if err != nil {
				return err
			}
			return r.WriteSigned(env.Stdout, env.Stderr, signers)
		},
	}
}

func newTrustSignCmd() *Command {
	var keys options.SignerFlags
	return &Command{
		Use:     "sign DIST/RECORD.yaml --sign-key FILE",
		Summary: "Sign one built package version with a delegated team key.",
		Help: `Signs the version statement of a build record — package, version, build and
spec digest — with --sign-key and adds the signature to the record's sidecar,
RECORD.sig.yaml, which 'kbuild repo index' carries into the version's
signatures in index.yaml. Under a root that delegates the package, a
version counts for subscribers only with the delegation's threshold of such
signatures. Sign the record that will be published: rebuilding changes
nothing (same digest), but editing the record does.

Examples:
  # the virtualization team signs its build
  kbuild trust sign dist/kubevirt-1.9.0-4.yaml --sign-key keys/virt.key

  # sign every record of a package
  for r in dist/kubevirt-*-[0-9]*.yaml; do case $r in *.build.yaml|*.sig.yaml) ;; *) kbuild trust sign "$r" --sign-key keys/virt.key;; esac; done`,
		Flags: func(fs *pflag.FlagSet) {
			keys.AddFlags(fs, "the version statement (a delegation's key)")
			addAlias(fs, "key", "", "sign-key")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) != 1 || !keys.Given() {
				return usagef("sign takes one build record and --sign-key FILE")
			}
			signers, err := keys.Signers(env)
			if err != nil {
				return err
			}
			rec, sidecar, n, err := publish.SignRecord(args[0], signers...)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "signed %s %s build %d (keyid %s): %s has %d signature(s)\n",
				rec.Metadata.Name, rec.Spec.Version, rec.Spec.Build, strings.Join(trust.KeyIDs(signers), ", "), sidecar, n)
			return nil
		},
	}
}
