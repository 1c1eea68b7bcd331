package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/fetchsite"
	"kbuild.dev/kbuild/publish"
)

// buildPlan is what kbuild plan prints with --format json: the recipes to build,
// split into shards, and those already published. Lists are never null, so
// that fromJSON(...) in a workflow always sees arrays.
type buildPlan struct {
	Shards   []planShard `json:"shards"`
	UpToDate []string    `json:"upToDate"`
}

// planShard is one job of a build matrix.
type planShard struct {
	Index   int      `json:"index"`
	Recipes []string `json:"recipes"`
}

func newPlanCmd() *Command {
	var (
		shards int
		format formatFlag
		it     indexFlags
		net    timeoutFlag
	)
	return &Command{
		Name:    "plan",
		Usage:   "kbuild plan RECIPES_DIR... [--index REF (--public-key FILE | --root-key FILE)] [--shards N] [--format text|json]",
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

Being up to date says nothing about content: a recipe changed without a new
build number is up to date here; 'kbuild diff --index REF
--fail-on-immutable-change' catches it, and publishing refuses it.

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
			it.addFlags(fs, "of what is published; without it every recipe is new")
			addAlias(fs, "against", "", "index")
			net.addFlags(fs, "the index's site")
			fs.IntVar(&shards, "shards", 1, "split the recipes to build into at most this many shards")
			format.addFlags(fs, true, "text", "json")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) == 0 {
				return usagef("name at least one recipes directory")
			}
			if shards < 1 {
				return usagef("--shards %d: give 1 or more", shards)
			}
			if err := format.check(); err != nil {
				return err
			}
			dirs, err := builder.FindRecipes(args)
			if err != nil {
				return err
			}
			published := map[string]bool{}
			if it.ref != "" {
				trust, err := it.trust()
				if err != nil {
					return err
				}
				if trust == nil {
					return usagef("--index REF needs --public-key FILE or --root-key FILE: a published index is used only once its signature is verified")
				}
				pub, err := publish.ReadIndex(ctx, it.ref, trust, fetchsite.WithTimeout(net.timeout))
				var x *index.RepositoryIndex
				if err == nil {
					x = pub.Verified.Index
				}
				if errors.Is(err, fetchsite.ErrNotFound) {
					return fmt.Errorf("%w; for a first publish, plan without --index", err)
				}
				if err != nil {
					return err
				}
				published = publishedReleases(x)
			}
			var build, upToDate []string
			for _, d := range dirs {
				l, err := builder.Load(d)
				if err != nil {
					return err
				}
				slash := filepath.ToSlash(d)
				if l.Recipe == nil {
					fmt.Fprintf(env.Stderr, "warning: recipe %s does not decode; planned for building, which reports why\n", slash)
					build = append(build, slash)
					continue
				}
				r := l.Recipe
				if published[releaseKey(r.Metadata.Name, strings.TrimPrefix(r.Spec.Version, "v"), r.Spec.Build)] {
					upToDate = append(upToDate, slash)
				} else {
					build = append(build, slash)
				}
			}
			p := planShards(build, upToDate, shards)
			fmt.Fprintf(env.Stderr, "%d to build in %d shards, %d up to date\n", len(build), len(p.Shards), len(upToDate))
			if format.format == "json" {
				data, err := json.Marshal(p)
				if err != nil {
					return err
				}
				fmt.Fprintf(env.Stdout, "%s\n", data)
				return nil
			}
			for _, s := range p.Shards {
				for _, r := range s.Recipes {
					fmt.Fprintf(env.Stdout, "shard %d: %s\n", s.Index, r)
				}
			}
			for _, r := range p.UpToDate {
				fmt.Fprintf(env.Stdout, "up to date: %s\n", r)
			}
			return nil
		},
	}
}

// releaseKey names one build of one version of a package.
func releaseKey(name, version string, build int) string {
	return fmt.Sprintf("%s@%s build %d", name, version, build)
}

// publishedReleases returns the releaseKey of every version in x.
func publishedReleases(x *index.RepositoryIndex) map[string]bool {
	out := map[string]bool{}
	for name, p := range x.Packages {
		for _, v := range p.Versions {
			out[releaseKey(name, v.Version, v.Build)] = true
		}
	}
	return out
}

// planShards deals the sorted recipes to build round-robin into at most n
// non-empty shards.
func planShards(build, upToDate []string, n int) buildPlan {
	p := buildPlan{Shards: []planShard{}, UpToDate: append([]string{}, upToDate...)}
	count := min(n, len(build))
	for i := range count {
		p.Shards = append(p.Shards, planShard{Index: i, Recipes: []string{}})
	}
	for i, r := range build {
		s := &p.Shards[i%count]
		s.Recipes = append(s.Recipes, r)
	}
	return p
}
