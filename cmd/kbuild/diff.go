package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/chartpin"
	"kbuild.dev/kbuild/internal/fetchsite"
	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/internal/review"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/recipe"
)

// diffFlags are the flags of kbuild diff.
type diffFlags struct {
	buildFlags
	base          string
	it            indexFlags
	format        formatFlag
	failImmutable bool
}

func newDiffCmd() *Command {
	var f diffFlags
	return &Command{
		Name:    "diff",
		Usage:   "kbuild diff RECIPE_DIR... [--base REF | --index REF (--public-key FILE | --root-key FILE)] [--format text|markdown]",
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
			fs.StringVar(&f.base, "base", "", "git commit, branch or tag of the recipes repository to compare with (default HEAD)")
			f.it.addFlags(fs, "to compare with, instead of --base")
			addAlias(fs, "against", "", "index")
			f.format.addFlags(fs, true, "text", "markdown")
			fs.BoolVar(&f.failImmutable, "fail-on-immutable-change", false, "exit 1 when the recipe's version and build are published with other content (needs --index)")
			f.sourceFlags.addFlags(fs)
			f.renderFlags.addFlags(fs)
			f.jobsFlag.addFlags(fs, "charts built")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) == 0 {
				return usagef("name at least one recipe directory")
			}
			if f.base != "" && f.it.ref != "" {
				return usagef("--base and --index name two different bases; use one")
			}
			if f.failImmutable && f.it.ref == "" {
				return usagef("--fail-on-immutable-change compares with what is published: add --index REF")
			}
			if err := f.format.check(); err != nil {
				return err
			}
			dirs, err := builder.FindRecipes(args)
			if err != nil {
				return err
			}
			b, err := f.builder(env, nil, commonRoot(dirs), builder.WithUnpinnedImages(f.offline))
			if err != nil {
				return err
			}
			var published *index.RepositoryIndex
			if f.it.ref != "" {
				trust, err := f.it.trust()
				if err != nil {
					return err
				}
				if trust == nil {
					return usagef("--index REF needs --public-key FILE or --root-key FILE: a published index is compared with only once its signature is verified")
				}
				pub, err := publish.ReadIndex(ctx, f.it.ref, trust, fetchsite.WithTimeout(f.timeout))
				if err == nil {
					published = pub.Verified.Index
				}
				if errors.Is(err, fetchsite.ErrNotFound) {
					return fmt.Errorf("%w; nothing is published there yet, so compare with --base instead", err)
				}
				if err != nil {
					return err
				}
			}
			var errs []error
			for i, dir := range dirs {
				rep, err := f.compare(ctx, env, b, dir, published)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if i > 0 && f.format.format == "text" {
					fmt.Fprintln(env.Stdout)
				}
				if f.format.format == "markdown" {
					err = rep.WriteMarkdown(env.Stdout, review.WithCommand(f.command(dir)))
				} else {
					err = rep.WriteText(env.Stdout)
				}
				if err != nil {
					return err
				}
				if why := rep.ImmutableViolation(); f.failImmutable && why != "" {
					errs = append(errs, fmt.Errorf("recipe %s: %s@%s is %w (%s)", dir, rep.Package, rep.Head, builder.ErrImmutable, why))
				}
			}
			return errors.Join(errs...)
		},
	}
}

// command returns the command line that prints the full diff of dir.
func (f *diffFlags) command(dir string) string {
	c := "kbuild diff " + dir
	switch {
	case f.it.ref != "":
		c += " --index " + f.it.ref
	case f.base != "":
		c += " --base " + f.base
	}
	return c
}

// compare prepares the recipe in dir and its base and compares them.
func (f *diffFlags) compare(ctx context.Context, env *Env, b *builder.Builder, dir string, published *index.RepositoryIndex) (*review.Report, error) {
	head, err := preparePackage(ctx, env, b, dir, "")
	if err != nil {
		return nil, err
	}
	var base *review.Package
	if published != nil {
		base, err = publishedPackage(ctx, published, head, f.plainPolicy(), f.kubeVersion)
		if err != nil {
			return nil, fmt.Errorf("recipe %s: published version: %w", dir, err)
		}
		return review.Compare(base, head), nil
	}
	ref := f.base
	if ref == "" {
		ref = "HEAD"
	}
	baseDir, cleanup, err := checkoutRecipe(ctx, dir, ref)
	if err != nil {
		return nil, fmt.Errorf("recipe %s: base %s: %w", dir, ref, err)
	}
	defer cleanup()
	if baseDir != "" {
		base, err = preparePackage(ctx, env, b, baseDir, dir+" at "+ref)
		if err != nil {
			return nil, err
		}
	}
	return review.Compare(base, head), nil
}

// preparePackage prepares the recipe in dir and returns it as one side of
// a comparison. A recipe with problems is still compared, with a warning:
// validate reports them. label names the recipe in messages ("" for dir).
func preparePackage(ctx context.Context, env *Env, b *builder.Builder, dir, label string) (*review.Package, error) {
	if label == "" {
		label = dir
	}
	l, err := b.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("recipe %s: %w", label, err)
	}
	if l.Recipe == nil {
		return nil, fmt.Errorf("recipe %s: %w", label, l.Err())
	}
	p, err := b.PrepareLoaded(ctx, l)
	var pe *recipe.ProblemsError
	switch {
	case errors.As(err, &pe) && p != nil:
		fmt.Fprintf(env.Stderr, "warning: recipe %s has %d errors ('kbuild validate' lists them); comparing it anyway\n", label, len(pe.Problems.Errors()))
	case err != nil:
		return nil, fmt.Errorf("recipe %s: %w", label, err)
	}
	r := p.Recipe
	version := builder.ChartVersion(r)
	refs := map[string]*index.ChartRef{}
	pkg := &review.Package{Name: r.Metadata.Name}
	for _, c := range p.Charts {
		refs[c.Key] = &index.ChartRef{Name: c.Key, Version: version, Digest: c.Archive.Digest}
		pkg.Charts = append(pkg.Charts, review.Chart{Name: c.Key, Digest: c.Archive.Digest, Objects: c.Rendered.Objects, CRDs: c.Rendered.CRDs})
	}
	pkg.Spec = builder.Record(r, refs).Spec
	return pkg, nil
}

// publishedPackage returns the version of head's package in x to compare
// with (see review.Counterpart), its charts pulled by digest and rendered;
// nil when x does not have the package.
func publishedPackage(ctx context.Context, x *index.RepositoryIndex, head *review.Package, plain plainhttp.Policy, kubeVersion string) (*review.Package, error) {
	v, ok := review.Counterpart(x, head.Name, head.Spec.Version, head.Spec.Build)
	if !ok {
		return nil, nil
	}
	pkg := &review.Package{Name: head.Name, Spec: v.Spec}
	for _, c := range review.Charts(&v.Spec) {
		data, err := chartpin.PullPinned(ctx, c.Ref, plain)
		if err != nil {
			return nil, err
		}
		rd, err := builder.Render(data, c.Namespace, builder.RenderKubeVersion(kubeVersion))
		if err != nil {
			return nil, fmt.Errorf("chart %s %s: %w", c.Ref.Name, c.Ref.Digest, err)
		}
		pkg.Charts = append(pkg.Charts, review.Chart{Name: c.Ref.Name, Digest: c.Ref.Digest, Objects: rd.Objects, CRDs: rd.CRDs})
	}
	return pkg, nil
}

// checkoutRecipe writes the recipe directory dir as it is at git commit
// ref of its repository into a temporary directory and returns it with a
// function that removes it. baseDir is "" when the recipe does not exist
// at ref (a new package).
func checkoutRecipe(ctx context.Context, dir, ref string) (baseDir string, cleanup func(), err error) {
	cleanup = func() {}
	git := func(args ...string) ([]byte, error) {
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return out, nil
	}
	prefix, err := git("rev-parse", "--show-prefix")
	if err != nil {
		return "", cleanup, fmt.Errorf("%s is not in a git work tree, so there is no base to compare with; use --index REF: %w", dir, err)
	}
	commit, err := git("rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return "", cleanup, fmt.Errorf("%q is not a commit of the recipes repository; fetch it first (git fetch origin main) or name another", ref)
	}
	at := strings.TrimSpace(string(commit))
	sub := strings.TrimSuffix(strings.TrimSpace(string(prefix)), "/")
	if _, err := git("cat-file", "-e", at+":"+path.Join(sub, builder.RecipeFile)); err != nil {
		return "", cleanup, nil
	}
	tree := at + ":" + sub
	tmp, err := os.MkdirTemp("", "kbuild-diff-base-")
	if err != nil {
		return "", cleanup, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return "", cleanup, err
	}
	// git archive run in a subdirectory archives only that part of a tree.
	cmd := exec.CommandContext(ctx, "git", "-C", strings.TrimSpace(string(top)), "archive", "--format=tar", tree)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", cleanup, err
	}
	if err := cmd.Start(); err != nil {
		return "", cleanup, err
	}
	base := filepath.Join(tmp, filepath.Base(filepath.Clean(dir)))
	xerr := extractTar(out, base)
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return "", cleanup, fmt.Errorf("git archive %s: %w: %s", tree, err, strings.TrimSpace(stderr.String()))
	}
	if xerr != nil {
		return "", cleanup, fmt.Errorf("git archive %s: %w", tree, xerr)
	}
	return base, cleanup, nil
}

// extractTar writes the directories, files and symlinks of a git archive
// under dst, refusing names that leave it.
func extractTar(r io.Reader, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		if h.Typeflag == tar.TypeXGlobalHeader || name == "." {
			continue
		}
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("entry %q leaves the recipe directory", h.Name)
		}
		p := filepath.Join(dst, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			err = writeEntry(p, tr, os.FileMode(h.Mode)&0o755|0o644)
		case tar.TypeSymlink:
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.Symlink(h.Linkname, p)
			}
		default:
			err = fmt.Errorf("entry %q has unsupported type %q", h.Name, h.Typeflag)
		}
		if err != nil {
			return err
		}
	}
}

func writeEntry(p string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
