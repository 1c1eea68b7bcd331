package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/fetchsite"
	"kbuild.dev/kbuild/internal/review"
	"kbuild.dev/kbuild/publish"
)

func newRebuildCheckCmd() *Command {
	var (
		f          buildFlags
		indexRef   string
		publicKeys []string
	)
	return &Command{
		Name:    "rebuild-check",
		Usage:   "kbuild rebuild-check RECIPE_DIR... --index URL|FILE --public-key FILE",
		Summary: "Rebuild recipes from their pinned sources and compare with what the signed index publishes.",
		Help: `rebuild-check verifies the index with the public key, then rebuilds each
recipe from its pinned sources (using the cache; --offline to use nothing
else), without pushing anything, and compares every chart archive digest and
the spec digest with the published version of the same name, version and
build. It prints MATCH, or the first file inside the chart that differs (the
published chart is pulled from its registry to find it), and exits 1 if any
recipe does not rebuild to the published bytes.

Anyone can run it: this is how a published repository is checked to be what
its recipes say, on another machine, by another person.

Examples:
  # check every published recipe against the Pages index
  kbuild rebuild-check recipes/ --index https://acme.github.io/packages/index.yaml \
    --public-key keys/index.pub

  # from the cache alone
  kbuild rebuild-check --offline recipes/kubevirt --index _site/index.yaml --public-key _site/keys/index.pub`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&indexRef, "index", "", "the published index: index.yaml path or http(s) URL")
			fs.StringArrayVar(&publicKeys, "public-key", nil, "public key that signs the index (repeat for several)")
			f.sourceFlags.addFlags(fs)
			f.renderFlags.addFlags(fs)
			fs.IntVarP(&f.jobs, "jobs", "j", 0, "charts rebuilt at once (default: CPUs)")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) == 0 || indexRef == "" || len(publicKeys) == 0 {
				return usagef("name recipe directories, --index and --public-key")
			}
			keys, err := index.LoadPublicKeys(publicKeys, false)
			if err != nil {
				return err
			}
			pub, err := publish.ReadIndex(ctx, indexRef, &index.Trust{IndexKeys: keys}, fetchsite.WithTimeout(f.timeout))
			if err != nil {
				return err
			}
			v := pub.Verified
			dirs, err := builder.FindRecipes(args)
			if err != nil {
				return err
			}
			b, err := f.builder(env, nil, builder.CommonRoot(dirs))
			if err != nil {
				return err
			}
			differ := 0
			for _, d := range dirs {
				msg, err := review.Rebuild(ctx, b, v.Index, d, f.plainPolicy())
				var de *review.DifferError
				switch {
				case errors.As(err, &de):
					differ++
					fmt.Fprintf(env.Stdout, "%s: DIFFER: %v\n", d, de.Err)
					continue
				case err != nil:
					differ++
					fmt.Fprintf(env.Stdout, "%s: FAILED: %v\n", d, err)
					continue
				}
				fmt.Fprintf(env.Stdout, "%s: MATCH %s\n", d, msg)
			}
			if differ > 0 {
				fmt.Fprintf(env.Stdout, "%d of %d recipes do not rebuild to what is published\n", differ, len(dirs))
				return &exitError{1}
			}
			return nil
		},
	}
}
