package main

import (
	"context"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/cmd/kbuild/options"
)

func newValidateCmd() *Command {
	var f options.BuildFlags
	var sets setFlags
	return &Command{
		Use:     "validate DIR...",
		Summary: "Check recipes without publishing anything.",
		Help: `Each DIR is a recipe directory (holding recipe.yaml) or a directory of them.
validate decodes every recipe strictly (an unknown field is an error with its
line), makes the static checks of the recipe format, then fetches the sources
(from the cache when present), assembles and renders every chart with Helm's
engine and checks that each CRD shipped is declared and each image run is
pinned by digest. It prints "DIR: ok" or "DIR: FAILED" with error: and
warning: lines, then "N of M recipes failed", and exits 1 on any error.

With --offline, a recipe whose sources are not in the cache is checked
statically and a warning says what could not be checked; images that are not
pinned yet are warnings too, because pinning needs the registry. Under GitHub
Actions (GITHUB_ACTIONS=true) problems are also printed as ::error and
::warning annotations on the recipe file and line.

A release set (a meta package whose requirements pin exact builds,
version "=VERSION+build.N") is checked against the recipes validated and,
with --index, the published index (verified with --public-key, --root-key
or --index-root): every member must exist there, and no two members may pin
one image to two digests. With --index (a suite's index), validate also
reports what kubepkg would do there: a member build or version that
members installed with a set of the suite would move to ('kubepkg
install' writes spec.version ~MAJOR.MINOR on each member, and the
operator runs the newest build meeting it), and a recipe whose version and
build the index holds with another spec — bump spec.build.

Examples:
  # check every recipe of the repository
  kbuild validate recipes/

  # check two recipes without touching the network
  kbuild validate --offline recipes/kubevirt recipes/cdi

  # check the foreman-stack release set against the published index too
  kbuild validate recipes/ --index https://acme.github.io/packages/unstable/index.yaml --public-key keys/index.pub`,
		Flags: func(fs *pflag.FlagSet) {
			f.AddPrepareFlags(fs)
			f.JobsFlag.AddFlags(fs, "recipes checked")
			sets.IndexFlags.AddFlags(fs, "whose versions release sets may pin")
			sets.IndexRootFlag.AddFlags(fs)
			addAlias(fs, "index-public-key", "", "public-key")
		},
		Args: minArgs(1, "name at least one recipe directory"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			dirs, b, err := f.RecipesBuilder(env, thisKbuild(), nil, args, builder.WithUnpinnedImages(f.Offline))
			if err != nil {
				return err
			}
			setProbs, err := sets.check(ctx, b, dirs, f.Timeout)
			if err != nil {
				return err
			}
			if b.ValidateAll(ctx, env.Stdout, dirs, f.Offline, setProbs, github(env), withHint) > 0 {
				return &exitError{Code: 1}
			}
			return nil
		},
	}
}
