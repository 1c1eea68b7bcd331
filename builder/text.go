package builder

import (
	"fmt"
	"io"
)

// WriteText writes the build for a person: each chart pushed with its
// manifest and archive digests and the build record on w, the charts
// adopted or reused on notes, and each warning of the recipe on w (with
// github also as a workflow annotation, recipe.Problem.WriteText).
func (r *Result) WriteText(w, notes io.Writer, github bool) error {
	for _, c := range r.Info.Charts {
		fmt.Fprintf(w, "%s@%s archive %s\n", c.Ref, c.Manifest, c.Digest)
	}
	for _, msg := range r.Adopted {
		fmt.Fprintln(notes, msg)
	}
	for _, ref := range r.Reused {
		fmt.Fprintf(notes, "%s: already published with the same content; reused\n", ref)
	}
	fmt.Fprintf(w, "wrote %s\n", r.RecordFile)
	for _, p := range r.Warnings {
		if err := p.WriteText(w, r.RecipeFile, github); err != nil {
			return err
		}
	}
	return nil
}
