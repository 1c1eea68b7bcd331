package main

import (
	"context"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/review"
	"kbuild.dev/kbuild/siteread"
)

func newRebuildCheckCmd() *Command {
	var (
		f          options.BuildFlags
		it         options.IndexFlags
		otherBuild bool
	)
	return &Command{
		Use:     "rebuild-check RECIPE_DIR... --index REF (--public-key FILE | --root-key FILE)",
		Summary: "Rebuild recipes from their pinned sources and compare with what the signed index publishes.",
		Help: `rebuild-check verifies the index with the public key (or under the root of
trust its --root-key keys pin), then rebuilds each
recipe from its pinned sources (using the cache; --offline to use nothing
else), without pushing anything, and compares every chart archive digest and
the spec digest with the published version of the same name, version and
build. It prints MATCH, or the first file inside the chart that differs (the
published chart is pulled from its registry to find it), and exits 1 if any
recipe does not rebuild to the published bytes.

Anyone can run it: this is how a published repository is checked to be what
its recipes say, on another machine, by another person.

Each version's build info (build/NAME-VERSION-BUILD.build.yaml beside the
index) names the kbuild that built it (builder, and builderSum for a
module install). A rebuild is only meaningful with that same kbuild: a
kbuild upgrade may change how charts are packed, and then every digest
(see CONTRIBUTING.md, "Releasing kbuild"). rebuild-check refuses a version
another kbuild built, naming it, unless --other-kbuild; each MATCH says
which kbuild published it.

Examples:
  # check every published recipe against the Pages index
  kbuild rebuild-check recipes/ --index https://acme.github.io/packages/index.yaml \
    --public-key keys/index.pub

  # from the cache alone
  kbuild rebuild-check --offline recipes/kubevirt --index _site/index.yaml --public-key _site/keys/index.pub`,
		Flags: func(fs *pflag.FlagSet) {
			it.AddFlags(fs, "to compare with (required)")
			f.AddPrepareFlags(fs)
			f.JobsFlag.AddFlags(fs, "charts rebuilt")
			fs.BoolVar(&otherBuild, "other-kbuild", false, "compare versions that another kbuild release built (whose packing may differ) instead of refusing them")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) == 0 || it.Ref == "" {
				return usagef("name recipe directories and --index")
			}
			trust, err := it.Require("rebuild-check")
			if err != nil {
				return err
			}
			pub, err := siteread.ReadIndex(ctx, it.Ref, trust, siteread.WithTimeout(f.Timeout))
			if err != nil {
				return err
			}
			dirs, b, err := f.RecipesBuilder(env, thisKbuild(), nil, args)
			if err != nil {
				return err
			}
			k := review.Kbuild{AllowOther: otherBuild, Published: pub.ReadBuildInfo}
			differ, other := review.RebuildAll(ctx, env.Stdout, b, pub.Verified.Index, dirs, f.PlainPolicy(), k, withHint)
			if differ > 0 {
				return &exitError{Code: 1}
			}
			if other > 0 {
				return &exitError{Code: exitRefused}
			}
			return nil
		},
	}
}
