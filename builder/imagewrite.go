package builder

import (
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

// UnpinnedImages returns an error naming the entries whose digest could
// not be looked up and the command that pins them once their registries
// can be reached, or nil when every entry is pinned. dir is the recipe.
func UnpinnedImages(entries []ImageEntry, dir string) error {
	var errs []string
	for _, e := range entries {
		if e.Err != nil {
			errs = append(errs, "  "+e.Err.Error())
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%d images are not pinned, their digests could not be looked up:\n%s\nrun kbuild images %s --write where their registries can be reached", len(errs), strings.Join(errs, "\n"), dir)
}
