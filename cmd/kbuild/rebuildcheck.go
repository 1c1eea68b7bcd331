package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/chartpin"
	"kbuild.dev/kbuild/internal/fetchsite"
	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/publish"
)

func newRebuildCheckCmd() *Command {
	var (
		f  buildFlags
		it indexFlags
	)
	return &Command{
		Name:    "rebuild-check",
		Usage:   "kbuild rebuild-check RECIPE_DIR... --index REF (--public-key FILE | --root-key FILE)",
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

Examples:
  # check every published recipe against the Pages index
  kbuild rebuild-check recipes/ --index https://acme.github.io/packages/index.yaml \
    --public-key keys/index.pub

  # from the cache alone
  kbuild rebuild-check --offline recipes/kubevirt --index _site/index.yaml --public-key _site/keys/index.pub`,
		Flags: func(fs *pflag.FlagSet) {
			it.addFlags(fs, "to compare with (required)")
			f.sourceFlags.addFlags(fs)
			f.renderFlags.addFlags(fs)
			f.jobsFlag.addFlags(fs, "charts rebuilt")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) == 0 || it.ref == "" {
				return usagef("name recipe directories and --index")
			}
			trust, err := it.require("rebuild-check")
			if err != nil {
				return err
			}
			pub, err := publish.ReadIndex(ctx, it.ref, trust, fetchsite.WithTimeout(f.timeout))
			if err != nil {
				return err
			}
			v := pub.Verified
			dirs, err := builder.FindRecipes(args)
			if err != nil {
				return err
			}
			b, err := f.builder(env, nil, commonRoot(dirs))
			if err != nil {
				return err
			}
			differ := 0
			for _, d := range dirs {
				msg, err := rebuildCheck(ctx, b, v.Index, d, f.plainPolicy())
				var de *differError
				switch {
				case errors.As(err, &de):
					differ++
					fmt.Fprintf(env.Stdout, "%s: DIFFER: %v\n", d, de.err)
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

// differError says how a rebuild differs from what is published.
type differError struct{ err error }

func (e *differError) Error() string { return e.err.Error() }

// rebuildCheck rebuilds one recipe and compares it with its published
// version; it returns what matched, or a *differError saying what differs.
func rebuildCheck(ctx context.Context, b *builder.Builder, idx *index.RepositoryIndex, dir string, plain plainhttp.Policy) (string, error) {
	p, err := b.Prepare(ctx, dir)
	if err != nil {
		return "", err
	}
	r := p.Recipe
	ver := strings.TrimPrefix(r.Spec.Version, "v")
	var pub *index.IndexVersion
	if pkg := idx.Packages[r.Metadata.Name]; pkg != nil {
		for i := range pkg.Versions {
			if pkg.Versions[i].Version == ver && pkg.Versions[i].Build == r.Spec.Build {
				pub = &pkg.Versions[i]
			}
		}
	}
	if pub == nil {
		return "", fmt.Errorf("%s %s build %d is not published in the index", r.Metadata.Name, ver, r.Spec.Build)
	}
	published := map[string]*index.ChartRef{}
	for _, v := range pub.Spec.Variants {
		for _, c := range v.Components {
			if c.Chart != nil {
				published[c.Chart.Name] = c.Chart
			}
		}
	}
	rebuilt := map[string]*index.ChartRef{}
	var diffs []error
	for _, c := range p.Charts {
		pc := published[c.Key]
		if pc == nil {
			diffs = append(diffs, fmt.Errorf("chart %s is not in the published version", c.Key))
			continue
		}
		ref := *pc
		ref.Digest = c.Archive.Digest
		rebuilt[c.Key] = &ref
		if pc.Digest == c.Archive.Digest {
			continue
		}
		diff := fmt.Errorf("chart %s: archive published %s, rebuilt %s", c.Key, pc.Digest, c.Archive.Digest)
		data, err := chartpin.PullPinned(ctx, *pc, plain)
		switch {
		case err != nil:
			diff = fmt.Errorf("%w; the published chart could not be pulled to find the file: %v", diff, err)
		default:
			file, how, err := builder.CompareArchives(data, c.Archive.Data)
			switch {
			case err != nil:
				diff = fmt.Errorf("%w: %v", diff, err)
			case file == "":
				diff = fmt.Errorf("%w; every file is the same, so the archive's packing differs (another kbuild version or SOURCE_DATE_EPOCH?)", diff)
			default:
				diff = fmt.Errorf("%w; first difference: %s (%s)", diff, file, how)
			}
		}
		diffs = append(diffs, diff)
	}
	if len(diffs) > 0 {
		return "", &differError{errors.Join(diffs...)}
	}
	rec := builder.Record(r, rebuilt)
	d, err := rec.Spec.Digest()
	if err != nil {
		return "", err
	}
	if d != pub.Digest {
		return "", &differError{fmt.Errorf("every chart matches, but the spec digest differs: published %s, rebuilt %s (the recipe's package metadata changed)", pub.Digest, d)}
	}
	return fmt.Sprintf("%s %s build %d: %d charts and spec %s", r.Metadata.Name, ver, r.Spec.Build, len(p.Charts), d), nil
}
