package builder

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// ValidateAll validates each recipe directory of dirs (Validate) and
// writes to w "DIR: ok" or "DIR: FAILED" with its problems — those
// found, an error that stopped the check (rewritten by explain, nil
// leaves it) and the extra ones of the directory (CheckSets) — with
// github also as workflow annotations, then "N of M recipes failed". It
// returns how many failed.
func (b *Builder) ValidateAll(ctx context.Context, w io.Writer, dirs []string, offline bool, extra map[string]recipe.Problems, github bool, explain func(error) error) int {
	failed := 0
	for _, d := range dirs {
		probs, err := b.Validate(ctx, d, offline)
		if err != nil {
			if explain != nil {
				err = explain(err)
			}
			probs = append(probs, recipe.Problem{Message: err.Error()})
		}
		probs = append(probs, extra[d]...)
		status := "ok"
		if len(probs.Errors()) > 0 {
			status = "FAILED"
			failed++
		}
		fmt.Fprintf(w, "%s: %s\n", d, status)
		for _, p := range probs {
			p.WriteText(w, filepath.Join(d, RecipeFile), github)
		}
	}
	fmt.Fprintf(w, "%d of %d recipes failed\n", failed, len(dirs))
	return failed
}

// FetchAll fetches the sources of each recipe directory of dirs (Fetch)
// and writes one line per source to w, "DIR NAME DIGEST ORIGIN"; a
// recipe that fails is written to notes with its error (rewritten by
// explain, nil leaves it), and then "N of M recipes could not be
// fetched". It returns how many failed.
func (b *Builder) FetchAll(ctx context.Context, w, notes io.Writer, dirs []string, explain func(error) error) int {
	failed := 0
	for _, d := range dirs {
		srcs, err := b.Fetch(ctx, d)
		if err != nil {
			if explain != nil {
				err = explain(err)
			}
			failed++
			fmt.Fprintf(notes, "%s: %v\n", d, err)
			continue
		}
		for _, s := range srcs {
			fmt.Fprintf(w, "%s %s %s %s\n", d, s.Name, s.Digest, s.Origin)
		}
	}
	if failed > 0 {
		fmt.Fprintf(notes, "%d of %d recipes could not be fetched\n", failed, len(dirs))
	}
	return failed
}
