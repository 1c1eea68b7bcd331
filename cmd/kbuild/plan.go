package main

import (
	"context"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/cmd/kbuild/options"
)

func newPlanCmd() *Command {
	var (
		shards  int
		format  options.FormatFlag
		it      options.IndexFlags
		timeout time.Duration
	)
	return &Command{
		Use:     "plan RECIPES_DIR... [--index REF (--public-key FILE | --root-key FILE)] [--shards N] [--format text|json]",
		Summary: "List the recipes a publish must build, split into shards for a CI job matrix.",
		Help: `plan reads every recipe (statically: nothing is fetched or built) and compares
its name, version and build with the versions published in --index (a site
directory, index.yaml or http(s) URL, verified first with --public-key or
--root-key). A recipe whose name@version build N is
published is up to date; every other recipe is to be built. Without
--index (a first publish) every recipe is to be built. A recipe that does
not decode is planned for building, where it fails with the details.

The recipes to build, sorted by directory, are dealt round-robin into at
most N shards: recipe i goes to shard i mod N, so shard sizes differ by at
most one and the same recipes always give the same shards. No shard is
empty: fewer recipes than N give fewer shards, and none to build gives
"shards": []. Guard a matrix job on that, as GitHub refuses an empty matrix.

A recipe whose name@version build N is published with another spec (a
capability, requirement, image or install setting changed without a new
build number) is neither: plan exits 1 naming the field that changed, and
says to bump spec.build, as publish does. A change inside a chart's files
needs a build to see: 'kbuild diff --index REF --fail-on-immutable-change'
or 'kbuild rebuild-check'.

--format json prints {"shards":[{"index":0,"recipes":["recipes/a",...]},...],
"upToDate":[...]} for fromJSON(...) in a workflow's strategy.matrix.

Examples:
  # what a publish would build, against the published index
  kbuild plan recipes/ --index https://example.github.io/packages/index.yaml --public-key keys/index.pub

  # a matrix of up to 4 build jobs, for a GitHub Actions output
  echo "plan=$(kbuild plan recipes/ --index "$PAGES_URL/index.yaml" --public-key keys/index.pub --shards 4 --format json)" >> "$GITHUB_OUTPUT"

  # the first publish: everything is new
  kbuild plan recipes/ --shards 2`,
		Flags: func(fs *pflag.FlagSet) {
			it.AddFlags(fs, "of what is published; without it every recipe is new")
			addAlias(fs, "against", "", "index")
			options.AddTimeoutFlag(fs, &timeout, "the index's site")
			fs.IntVar(&shards, "shards", 1, "split the recipes to build into at most this many shards")
			format.AddFlags(fs, true, "text", "json")
		},
		Args: minArgs(1, "name at least one recipes directory"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			if shards < 1 {
				return usagef("--shards %d: give 1 or more", shards)
			}
			if err := format.Check(); err != nil {
				return err
			}
			dirs, err := builder.FindRecipes(args)
			if err != nil {
				return err
			}
			published, err := it.Published(ctx, timeout, "used", "for a first publish, plan without --index")
			if err != nil {
				return err
			}
			p, err := builder.PlanBuilds(dirs, published, shards, env.Warnf)
			if err != nil {
				return err
			}
			if format.Format == "json" {
				return p.WriteJSON(env.Stdout, env.Stderr)
			}
			return p.WriteText(env.Stdout, env.Stderr)
		},
	}
}
