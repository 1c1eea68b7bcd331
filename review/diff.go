package review

import (
	"context"
	"errors"
	"fmt"
	"io"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
)

// Diff is the action of kbuild diff: each recipe compared with its
// published version or with itself at a git commit, the reports written
// in turn.
type Diff struct {
	Sides
	// Published is the verified index compared with, whose charts are
	// pulled over plain HTTP as the builder's fetcher allows; nil compares
	// with the recipes at git commit Base (Sides.Against).
	Published *index.RepositoryIndex
	Base      string
	// Markdown writes each report as Markdown, naming Command(dir) as the
	// command that prints the full diff (nil: none); otherwise as text, an
	// empty line between two reports.
	Markdown bool
	Command  func(dir string) string
	// FailImmutable makes a recipe that changes its published release in
	// place (Report.ImmutableViolation) an error wrapping
	// builder.ErrImmutable.
	FailImmutable bool

	// against compares one recipe (nil: Sides.Against); tests replace it.
	against func(ctx context.Context, dir string) (*Report, error)
}

// Run compares each of dirs and writes its report to w. A recipe that
// cannot be compared, or with FailImmutable changes its published release
// in place, is an error of the result; the other recipes are still
// compared. An error writing to w stops it.
func (d *Diff) Run(ctx context.Context, w io.Writer, dirs []string) error {
	against := d.against
	if against == nil {
		against = func(ctx context.Context, dir string) (*Report, error) {
			return d.Sides.Against(ctx, dir, d.Published, d.Base)
		}
	}
	var errs []error
	for i, dir := range dirs {
		rep, err := against(ctx, dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if d.Markdown {
			var opts []MarkdownOption
			if d.Command != nil {
				opts = append(opts, WithCommand(d.Command(dir)))
			}
			err = rep.WriteMarkdown(w, opts...)
		} else {
			if i > 0 {
				fmt.Fprintln(w)
			}
			err = rep.WriteText(w)
		}
		if err != nil {
			return err
		}
		if why := rep.ImmutableViolation(); d.FailImmutable && why != "" {
			errs = append(errs, fmt.Errorf("recipe %s: %s@%s is %w (%s)", dir, rep.Package, rep.Head, builder.ErrImmutable, why))
		}
	}
	return errors.Join(errs...)
}
