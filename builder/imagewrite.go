package builder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/recipe"
)

// Comment says which charts render the image, for the images: block:
// a TODO when its digest could not be looked up, a note when no chart
// renders it.
func (e ImageEntry) Comment() string {
	switch {
	case e.Err != nil:
		return "TODO: pin; looking up the digest failed"
	case len(e.Charts) == 0:
		return "no chart renders it (deployed by an operator?)"
	}
	return "rendered by chart " + strings.Join(e.Charts, ", ")
}

// WriteImages rewrites the package.images block of the recipe file in
// place with entries (see PlanImages), keeping comments; an image the
// recipe did not declare gets Comment. The file is replaced whole or not
// at all.
func WriteImages(file string, entries []ImageEntry) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var lines []recipe.ImageLine
	for _, e := range entries {
		comment := ""
		if e.Declared == "" {
			comment = e.Comment()
		}
		lines = append(lines, recipe.ImageLine{Old: e.Declared, New: e.Ref, Comment: comment})
	}
	out, err := recipe.RewriteImages(data, lines)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return atomicfile.WriteFile(file, out, 0o644)
}

// ErrUnpinned is wrapped by UnpinnedImages' error: images whose digest
// could not be looked up; pin them once their registries can be reached.
var ErrUnpinned = errors.New("images are not pinned")

// UnpinnedImages returns an error (wrapping ErrUnpinned) naming the
// entries whose digest could not be looked up, or nil when every entry is
// pinned.
func UnpinnedImages(entries []ImageEntry) error {
	var errs []string
	for _, e := range entries {
		if e.Err != nil {
			errs = append(errs, "  "+e.Err.Error())
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%d %w, their digests could not be looked up:\n%s", len(errs), ErrUnpinned, strings.Join(errs, "\n"))
}

// PinnedImages is what PinImages did.
type PinnedImages struct {
	// File is the recipe file; Written says whether its images: block
	// was rewritten.
	File    string
	Written bool
	// Entries are the images, as PlanImages returns them.
	Entries []ImageEntry
}

// PinImages is the action of kbuild images: it loads the recipe in dir (a
// recipe whose only problems are unpinned images loads), prepares and
// renders its charts, resolves every image they run or the recipe
// declares to its digest with the builder's fetcher (PlanImages) and,
// with write, rewrites the recipe's images: block (WriteImages). The
// result holds the entries whenever they were planned; images that could
// not be pinned are an error after the rest is done (UnpinnedImages).
func (b *Builder) PinImages(ctx context.Context, dir string, write bool) (*PinnedImages, error) {
	l, err := Load(dir)
	if err != nil {
		return nil, err
	}
	if l.Recipe == nil || !l.Problems.OnlyUnpinned() {
		return nil, l.Err()
	}
	p, err := b.PrepareLoaded(ctx, l)
	if p == nil {
		return nil, err
	}
	res := &PinnedImages{File: l.File, Entries: PlanImages(ctx, p, b.fetcher.ResolveImage)}
	if write {
		if err := WriteImages(l.File, res.Entries); err != nil {
			return res, err
		}
		res.Written = true
	}
	return res, UnpinnedImages(res.Entries)
}
