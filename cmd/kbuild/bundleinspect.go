package main

import (
	"context"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/bundle"
	"kbuild.dev/kbuild/cmd/kbuild/options"
)

func newBundleInspectCmd() *Command {
	var format options.FormatFlag
	return &Command{
		Use:     "inspect FILE [--format json]",
		Summary: "Say what a bundle holds: when it was made, packages, charts, images and who pins them.",
		Help: `Reads FILE, hashing every blob, and prints when it was made, the package
versions, every chart and every image with its digest and the versions that
pin it, as the bundled index says (not bundle.json). Inspect has no keys, so
it cannot tell a genuine index from a forged one: 'kbuild bundle import'
verifies.

Examples:
  # a summary
  kbuild bundle inspect virt.tar

  # every image digest, for a review or a script
  kbuild bundle inspect virt.tar --format json | jq -r '.images[].ref'`,
		Flags: func(fs *pflag.FlagSet) {
			format.AddFlags(fs, true, "text", "json")
		},
		Args: exactArgs(1, "inspect takes one FILE"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			if err := format.Check(); err != nil {
				return err
			}
			in, err := bundle.Inspect(ctx, args[0])
			if err != nil {
				return refusal(env, err)
			}
			if format.Format == "json" {
				return in.WriteJSON(env.Stdout)
			}
			return in.WriteText(env.Stdout)
		},
	}
}
