package main

import (
	"context"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/bump"
	"kbuild.dev/kbuild/cmd/kbuild/options"
)

func newBumpCmd() *Command {
	var (
		f       options.BuildFlags
		it      options.IndexFlags
		format  options.FormatFlag
		version string
	)
	return &Command{
		Use:     "bump RECIPE_DIR [--version VERSION] [--index REF (--public-key FILE | --root-key FILE)] [--format text|markdown]",
		Summary: "Move a recipe to a new upstream version: pins, digests and images verified, then validated and diffed.",
		Help: `bump reads the recipe's watch.yaml (docs/watch.md), takes the newest
upstream version the rule allows (or --version), and rewrites recipe.yaml in
place, every other line and comment kept byte for byte: each followed
source's URL, git commit or chart version with its digest, fetched and
verified; each followed image's tag, re-pinned by the digest it has now for
the rule's platform; spec.version set, spec.build reset to 1, and the
build:NAME@VERSION+build.N capability in provides renamed. Then it validates
the recipe and prints what the bump does to the rendered charts (as kbuild
diff does): against the published index with --index, else against the
recipe at git HEAD.

Nothing is written when upstream breaks a pin rule: a chart whose archive
differs from the digest its repository index lists, a release asset whose
download differs from the digest the release lists, an image tag with no
manifest for the platform. A recipe that does not validate after the edit
is put back. A bump to the version the recipe has changes nothing, unless
an upstream under also: moved (an operator's helper images on their own
release line): then what follows it is re-pinned, the version stays and
the build goes up by one.

A release set (a recipe whose requirements pin exact builds,
"=VERSION+build.N") has no watch.yaml: bump moves each pin and build
capability to the build its member's recipe beside it is at, once --index
(the published index, verified) holds every one of them; until then it
changes nothing and says which builds it waits for. The set takes its
members' version when they share one (build 1), else keeps its version and
raises its build; the new pins must resolve against the published index.

Examples:
  # to the newest version watch.yaml allows
  kbuild bump recipes/kubevirt

  # to a chosen version, the diff against what is published, for a PR body
  kbuild bump recipes/cdi --version 1.66.2 --format markdown \
    --index https://example.github.io/packages/ --public-key keys/index.pub

  # a release set, once its members' bumps are published
  kbuild bump recipes/foreman-stack --index https://example.github.io/packages/ --public-key keys/index.pub`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&version, "version", "", "upstream version to bump to (default: the newest the watch rule allows)")
			it.AddFlags(fs, "to compare the bumped recipe with (default: the recipe at git HEAD)")
			format.AddFlags(fs, false, "text", "markdown")
			f.AddPrepareFlags(fs)
		},
		Args: exactArgs(1, "name one recipe directory"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			if err := format.Check(); err != nil {
				return err
			}
			f.Jobs = 1
			b, err := f.Builder(env, thisKbuild(), nil, "")
			if err != nil {
				return err
			}
			bp := &bump.Bumper{Builder: b, Warnf: env.Warnf}
			if bp.Looker, err = f.Looker(); err != nil {
				return err
			}
			if bp.Index, err = it.Published(ctx, f.Timeout, "compared with", "nothing is published there yet, so leave --index out to compare with git HEAD"); err != nil {
				return err
			}
			res, err := bp.Bump(ctx, args[0], version)
			if err != nil {
				return err
			}
			if format.Format == "markdown" {
				return res.WriteMarkdown(env.Stdout)
			}
			return res.WriteText(env.Stdout)
		},
	}
}
