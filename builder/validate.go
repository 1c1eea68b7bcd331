package builder

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/sources"
)

// Validate checks the recipe in dir as kbuild validate does: statically,
// then, when that finds no error, by preparing it (fetching its sources,
// rendering its charts). With offline, sources missing from the cache
// become a warning instead of an error. It returns the problems found,
// and an error when the recipe could not be checked at all.
func (b *Builder) Validate(ctx context.Context, dir string, offline bool) (recipe.Problems, error) {
	l, err := b.Load(dir)
	if err != nil {
		return nil, err
	}
	probs := l.Problems
	if len(probs.Errors()) > 0 {
		return probs, nil
	}
	p, err := b.PrepareLoaded(ctx, l)
	var pe *recipe.ProblemsError
	switch {
	case err == nil:
		return p.Problems, nil
	case errors.As(err, &pe):
		return pe.Problems, nil
	case offline && errors.Is(err, sources.ErrOffline):
		return append(probs, recipe.Problem{Severity: recipe.Warning, Message: fmt.Sprintf("not checked against the rendered charts (CRDs shipped, images run): %v", err)}), nil
	}
	return probs, err
}

// CommonRoot returns the parent directory shared by the recipe
// directories dirs ("" for none), used to record recipe paths and the
// recipes repository's commit (WithRecipesRoot).
func CommonRoot(dirs []string) string {
	if len(dirs) == 0 {
		return ""
	}
	root := filepath.Dir(dirs[0])
	for _, d := range dirs[1:] {
		for root != "." && root != "/" {
			if rel, err := filepath.Rel(root, d); err == nil && rel != ".." && !filepath.IsAbs(rel) && !startsDotDot(rel) {
				break
			}
			root = filepath.Dir(root)
		}
	}
	return root
}

func startsDotDot(rel string) bool {
	return rel == ".." || len(rel) > 2 && rel[:3] == ".."+string(filepath.Separator)
}
