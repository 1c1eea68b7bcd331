package bump

import (
	"fmt"
	"io"
	"strings"

	"kbuild.dev/kbuild/review"
)

// WriteText writes what the bump did for a person: the recipe moved (or
// why nothing changed), each field changed, then the rendered difference.
func (r *Result) WriteText(w io.Writer) error {
	if r.unchanged(w) {
		return nil
	}
	switch {
	case r.Set:
		fmt.Fprintf(w, "bumped release set %s from %s to %s build %d: %s\n", r.File, r.From, r.To, r.Build, strings.Join(r.Members, ", "))
	case len(r.Also) > 0:
		fmt.Fprintf(w, "bumped %s at %s to build %d: %s\n", r.File, r.To, r.Build, strings.Join(r.Also, ", "))
	default:
		fmt.Fprintf(w, "bumped %s from %s to %s\n", r.File, r.From, r.To)
	}
	for _, c := range r.Changes {
		fmt.Fprintf(w, "  %s\n", c)
	}
	fmt.Fprintln(w)
	return r.Report.WriteText(w)
}

// WriteMarkdown writes what the bump did as a pull request body: one
// sentence, the fields changed in a collapsed block, then the rendered
// difference (review.Report.WriteMarkdown).
func (r *Result) WriteMarkdown(w io.Writer) error {
	if r.unchanged(w) {
		return nil
	}
	switch {
	case r.Set:
		fmt.Fprintf(w, "Bumps `%s` from %s to %s (build %d): the release set's members at their published builds, %s.\n\n", r.Package, r.From, r.To, r.Build, strings.Join(r.Members, ", "))
	case len(r.Also) > 0:
		fmt.Fprintf(w, "Bumps `%s` at %s to build %d: %s.\n\n", r.Package, r.To, r.Build, strings.Join(r.Also, ", "))
	default:
		fmt.Fprintf(w, "Bumps `%s` from %s to %s (build 1).\n\n", r.Package, r.From, r.To)
	}
	fmt.Fprintf(w, "<details><summary>%d fields of %s changed</summary>\n\n```\n", len(r.Changes), r.File)
	for _, c := range r.Changes {
		fmt.Fprintln(w, c)
	}
	fmt.Fprint(w, "```\n</details>\n\n")
	return r.Report.WriteMarkdown(w, review.WithCommand("kbuild diff "+r.Dir))
}

// unchanged writes why nothing changed, and says whether that is so.
func (r *Result) unchanged(w io.Writer) bool {
	switch {
	case r.Changed:
		return false
	case len(r.Waiting) > 0:
		fmt.Fprintf(w, "%s waits until its members' builds are published: %s; nothing changed\n", r.Dir, strings.Join(r.Waiting, ", "))
	default:
		fmt.Fprintf(w, "%s is at %s already; nothing changed\n", r.Dir, r.To)
	}
	return true
}
