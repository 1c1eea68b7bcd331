package review

import (
	"context"
	"errors"
	"fmt"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/render"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/chartpin"
	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/spec"
)

// Sides prepares the two sides of a comparison with a builder that pushes
// nothing. Warnf, when set, receives the warning about a recipe compared
// in spite of its problems (default: discarded).
type Sides struct {
	Builder *builder.Builder
	Warnf   func(format string, args ...any)
}

// AgainstCommit compares the recipe in dir with the same recipe at git
// commit ref of its repository (see CheckoutRecipe); a recipe absent at
// ref is compared as a new package.
func (s Sides) AgainstCommit(ctx context.Context, dir, ref string) (*Report, error) {
	head, err := s.Recipe(ctx, dir, "")
	if err != nil {
		return nil, err
	}
	baseDir, cleanup, err := CheckoutRecipe(ctx, dir, ref)
	defer cleanup()
	if err != nil {
		return nil, fmt.Errorf("recipe %s: base %s: %w", dir, ref, err)
	}
	var base *Package
	if baseDir != "" {
		if base, err = s.Recipe(ctx, baseDir, dir+" at "+ref); err != nil {
			return nil, err
		}
	}
	return Compare(base, head), nil
}

// AgainstIndex compares the recipe in dir with its counterpart in the
// verified index x (see Counterpart), whose charts are pulled by their
// pinned digests (plain HTTP as the builder's fetcher allows) and
// rendered as for the Kubernetes version the builder renders the recipe
// as.
func (s Sides) AgainstIndex(ctx context.Context, dir string, x *index.RepositoryIndex) (*Report, error) {
	head, err := s.Recipe(ctx, dir, "")
	if err != nil {
		return nil, err
	}
	base, err := Published(ctx, x, head, s.Builder.Fetcher().PlainPolicy(), s.Builder.KubeVersion())
	if err != nil {
		return nil, fmt.Errorf("recipe %s: published version: %w", dir, err)
	}
	return Compare(base, head), nil
}

// Recipe prepares the recipe in dir and returns it as one side of a
// comparison. A recipe with problems is still compared, with a warning:
// validate reports them. label names the recipe in messages ("" for dir).
func (s Sides) Recipe(ctx context.Context, dir, label string) (*Package, error) {
	if label == "" {
		label = dir
	}
	l, err := s.Builder.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("recipe %s: %w", label, err)
	}
	if l.Recipe == nil {
		return nil, fmt.Errorf("recipe %s: %w", label, l.Err())
	}
	p, err := s.Builder.PrepareLoaded(ctx, l)
	var pe *recipe.ProblemsError
	switch {
	case errors.As(err, &pe) && p != nil:
		if s.Warnf != nil {
			s.Warnf("warning: recipe %s has %d errors ('kbuild validate' lists them); comparing it anyway", label, len(pe.Problems.Errors()))
		}
	case err != nil:
		return nil, fmt.Errorf("recipe %s: %w", label, err)
	}
	r := p.Recipe
	version := builder.ChartVersion(r)
	refs := map[string]*spec.ChartRef{}
	pkg := &Package{Name: r.Metadata.Name}
	for _, c := range p.Charts {
		refs[c.Key] = &spec.ChartRef{Name: c.Key, Version: version, Digest: c.Archive.Digest}
		pkg.Charts = append(pkg.Charts, Chart{Name: c.Key, Digest: c.Archive.Digest, Objects: c.Rendered.Objects, CRDs: c.Rendered.CRDs})
	}
	pkg.Spec = builder.Record(r, refs).Spec
	return pkg, nil
}

// Published returns the version of head's package in x to compare with
// (see Counterpart), its charts pulled by digest and rendered; nil when x
// does not have the package.
func Published(ctx context.Context, x *index.RepositoryIndex, head *Package, plain plainhttp.Policy, kubeVersion string) (*Package, error) {
	v, ok := Counterpart(x, head.Name, head.Spec.Version, head.Spec.Build)
	if !ok {
		return nil, nil
	}
	pkg := &Package{Name: head.Name, Spec: v.Spec}
	for _, c := range Charts(&v.Spec) {
		data, err := chartpin.PullPinned(ctx, c.Ref, plain)
		if err != nil {
			return nil, err
		}
		rd, err := render.Render(data, c.Namespace, render.WithKubeVersion(kubeVersion))
		if err != nil {
			return nil, fmt.Errorf("chart %s %s: %w", c.Ref.Name, c.Ref.Digest, err)
		}
		pkg.Charts = append(pkg.Charts, Chart{Name: c.Ref.Name, Digest: c.Ref.Digest, Objects: rd.Objects, CRDs: rd.CRDs})
	}
	return pkg, nil
}

// Against compares dir with the published index x (AgainstIndex) or,
// when x is nil, with the recipe at the git commit ref, HEAD when ""
// (AgainstCommit).
func (s Sides) Against(ctx context.Context, dir string, x *index.RepositoryIndex, ref string) (*Report, error) {
	if x != nil {
		return s.AgainstIndex(ctx, dir, x)
	}
	if ref == "" {
		ref = "HEAD"
	}
	return s.AgainstCommit(ctx, dir, ref)
}
