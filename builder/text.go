package builder

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
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

// WriteText writes the images as a package.images block, sorted by
// reference, each once, with why it is there as a comment; or, when the
// block was written, the recipe file.
func (p *PinnedImages) WriteText(w io.Writer) error {
	if p.Written {
		_, err := fmt.Fprintf(w, "wrote %s\n", p.File)
		return err
	}
	sorted := slices.Clone(p.Entries)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Ref < sorted[j].Ref })
	fmt.Fprintln(w, "    images:")
	for i, e := range sorted {
		if i > 0 && e.Ref == sorted[i-1].Ref {
			continue
		}
		fmt.Fprintf(w, "      - %s  # %s\n", e.Ref, e.Comment())
	}
	return nil
}

// WriteText writes the plan one recipe a line, "shard N: DIR" then "up
// to date: DIR", and a count on notes.
func (p *Plan) WriteText(w, notes io.Writer) error {
	p.writeCount(notes)
	for _, s := range p.Shards {
		for _, r := range s.Recipes {
			fmt.Fprintf(w, "shard %d: %s\n", s.Index, r)
		}
	}
	for _, r := range p.UpToDate {
		fmt.Fprintf(w, "up to date: %s\n", r)
	}
	return nil
}

// WriteJSON writes the plan as one line of JSON (a CI job matrix), and a
// count on notes.
func (p *Plan) WriteJSON(w, notes io.Writer) error {
	p.writeCount(notes)
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

func (p *Plan) writeCount(w io.Writer) {
	build := 0
	for _, sh := range p.Shards {
		build += len(sh.Recipes)
	}
	fmt.Fprintf(w, "%d to build in %d shards, %d up to date\n", build, len(p.Shards), len(p.UpToDate))
}
