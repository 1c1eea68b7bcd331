package main

import (
	"context"

	"github.com/spf13/pflag"
)

func newTrustRootNextCmd() *Command {
	f := &rootFlags{}
	return &Command{
		Use:     "next ROOT.yaml [--root-key FILE...] [--root-threshold N] [--index-key FILE...] [--index-threshold N] [--qa-key FILE... [--qa-threshold N]] [--expires 8760h] [--delegate NAME=PATTERN[,PATTERN]] [--delegate-key NAME=FILE] [--undelegate NAME] -o SITE/root.yaml",
		Summary: "Create the next version of the root, unsigned, changing what the flags say.",
		Help: `Reads ROOT.yaml and writes version N+1 to -o and to root/<N+1>.yaml beside
it, keeping what no flag changes: --root-key replaces the root keys, --index-key
the index keys, --qa-key the qa keys (adding the qa role), --delegate-key NAME=… the keys of delegation NAME;
--delegate NAME=… adds a delegation or replaces its patterns, --undelegate
removes one. The expiry is renewed (--expires from now). The new version
counts only when signed by a threshold of the *previous* version's root
keys and of its own: when rotating root keys, the old holders sign too. The
mistake to avoid: publishing root.yaml before root/<N>.yaml — subscribers
walk every version.

Examples:
  # renew the root before it expires
  kbuild trust root next _site/root.yaml -o _site/root.yaml

  # rotate the index key
  kbuild trust root next _site/root.yaml --index-key keys/index2.pub -o _site/root.yaml

  # stop delegating
  kbuild trust root next _site/root.yaml --undelegate team-virt -o _site/root.yaml`,
		Flags: func(fs *pflag.FlagSet) { f.addFlags(fs, true) },
		Args:  exactArgs(1, "root next takes the current ROOT.yaml"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			return f.write(env, args[0])
		},
	}
}
