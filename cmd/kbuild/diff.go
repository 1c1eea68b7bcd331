package main

import (
	"context"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/review"
)

func newDiffCmd() *Command {
	var (
		d      = &review.Diff{}
		f      options.BuildFlags
		it     options.IndexFlags
		format options.FormatFlag
	)
	return &Command{
		Use:     "diff RECIPE_DIR... [--base REF | --index REF (--public-key FILE | --root-key FILE)] [--format text|markdown]",
		Summary: "Show what a recipe change does to the rendered charts, images, CRDs and requirements.",
		Help: `diff builds each recipe as it is now (fetching sources through the cache,
pushing nothing), renders its charts with their default values, does the
same for the base version, and prints what a reviewer needs: every rendered
object added, removed or changed (with a unified diff of that object's YAML),
grouped as "Deployment namespace/name", and the changes of chart archives,
images, CRDs, requirements (variants[].requires), provided names,
permissions and rollback safety. It is not a diff of recipe.yaml.

The base is one of:
  --base REF       the recipe at git commit REF of the recipes repository
                   (default HEAD); a recipe absent at REF is a new package
  --index REF      the version published in the index REF (a site
                   directory, index.yaml or http(s) URL; once --against):
                   the same version and build if published, else the
                   newest; its charts are pulled by their pinned digests
                   (--plain-http for loopback registries) and checked

With --fail-on-immutable-change (needs --index), diff exits 1 when the
recipe's version and build are already published and a fresh build's chart
archives or spec differ from the published ones: published versions never
change, so such a change needs a new build number. Builds are reproducible
only with the same SOURCE_DATE_EPOCH as the published build (default 1970).

--format markdown writes headings, a table of spec changes and collapsed
diff blocks, bounded in size, for $GITHUB_STEP_SUMMARY; text prints
everything.

Examples:
  # what the working tree changes in a recipe, against the last commit
  kbuild diff recipes/kubevirt

  # a pull request's change, for the job summary
  kbuild diff recipes/kubevirt --base origin/main --format markdown >> "$GITHUB_STEP_SUMMARY"

  # against what is published; fail if a published version would change
  kbuild diff recipes/kubevirt --index https://example.github.io/packages/index.yaml \
    --public-key keys/index.pub --fail-on-immutable-change`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&d.Base, "base", "", "git commit, branch or tag of the recipes repository to compare with (default HEAD)")
			it.AddFlags(fs, "to compare with, instead of --base")
			addAlias(fs, "against", "", "index")
			format.AddFlags(fs, true, "text", "markdown")
			fs.BoolVar(&d.FailImmutable, "fail-on-immutable-change", false, "exit 1 when the recipe's version and build are published with other content (needs --index)")
			f.AddPrepareFlags(fs)
			f.JobsFlag.AddFlags(fs, "charts built")
		},
		Args: minArgs(1, "name at least one recipe directory"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			if d.Base != "" && it.Ref != "" {
				return usagef("--base and --index name two different bases; use one")
			}
			if d.FailImmutable && it.Ref == "" {
				return usagef("--fail-on-immutable-change compares with what is published: add --index REF")
			}
			if err := format.Check(); err != nil {
				return err
			}
			dirs, b, err := f.RecipesBuilder(env, thisKbuild(), nil, args, builder.WithUnpinnedImages(f.Offline))
			if err != nil {
				return err
			}
			if d.Published, err = it.Published(ctx, f.Timeout, "compared with", "nothing is published there yet, so compare with --base instead"); err != nil {
				return err
			}
			d.Sides = review.Sides{Builder: b, Warnf: env.Warnf}
			d.Markdown = format.Format == "markdown"
			d.Command = func(dir string) string { return diffCommand(dir, it.Ref, d.Base) }
			return d.Run(ctx, env.Stdout, dirs)
		},
	}
}

// diffCommand returns the command line that prints the full diff of dir
// against the index ref or the git commit base.
func diffCommand(dir, ref, base string) string {
	c := "kbuild diff " + dir
	switch {
	case ref != "":
		c += " --index " + ref
	case base != "":
		c += " --base " + base
	}
	return c
}
