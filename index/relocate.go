package index

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Relocate makes AddBase and AddVerifiedFunc move the base index's charts (and
// OCIArtifact package trees) from one registry path to another, as
// kubepkg repo index --relocate does: every chart repository equal to or
// under a key of moves ("oci://old") is rewritten under its value
// ("oci://new"), and the version's spec digest is computed again. The
// caller must check that every moved chart is at its new place with its
// published archive digest (Relocated lists them). A version carrying
// delegated signatures cannot be moved: they cover its old digest.
func Relocate(moves map[string]string) BuilderOption {
	olds := make([]string, 0, len(moves))
	for o := range moves {
		olds = append(olds, o)
	}
	// The longest path first, so that a nested move wins.
	sort.Slice(olds, func(i, j int) bool {
		return len(olds[i]) > len(olds[j]) || len(olds[i]) == len(olds[j]) && olds[i] < olds[j]
	})
	return func(b *Builder) { b.moves, b.moveOrder = moves, olds }
}

// Relocated returns an index of the base versions Relocate moved, as
// they now are, for checking their charts at the new places (nil when
// none moved).
func (b *Builder) Relocated() *RepositoryIndex {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.relocated) == 0 {
		return nil
	}
	x := &RepositoryIndex{APIVersion: IndexAPIVersion, Kind: IndexKind, Packages: map[string]*IndexPackage{}}
	for _, r := range b.relocated {
		p := x.Packages[r.name]
		if p == nil {
			p = &IndexPackage{}
			x.Packages[r.name] = p
		}
		p.Versions = append(p.Versions, r.v)
	}
	return x
}

type relocatedVersion struct {
	name string
	v    IndexVersion
}

// relocate moves v of package name by b's moves, if any apply.
func (b *Builder) relocate(name string, v *IndexVersion) error {
	if len(b.moves) == 0 {
		return nil
	}
	s := v.Spec
	changed := false
	if r := s.SourceRef; r != nil && r.Kind == "OCIArtifact" {
		if u, ok := b.moved(r.URL); ok {
			cp := *r
			cp.URL, s.SourceRef, changed = u, &cp, true
		}
	}
	vs := slices.Clone(s.Variants)
	for i := range vs {
		cs := slices.Clone(vs[i].Components)
		for j := range cs {
			if ch := cs[j].Chart; ch != nil {
				if u, ok := b.moved(ch.Repository); ok {
					cp := *ch
					cp.Repository, cs[j].Chart, changed = u, &cp, true
				}
			}
		}
		vs[i].Components = cs
	}
	if !changed {
		return nil
	}
	where := fmt.Sprintf("%s %s build %d", name, v.Version, v.Build)
	if len(v.Signatures) > 0 {
		return fmt.Errorf("%w: %s carries delegated signatures, which cover its digest; relocating it would void them (publish the move with the delegation's key, or leave this repository where it is)", ErrSignedRelocation, where)
	}
	s.Variants = vs
	d, err := s.Digest()
	if err != nil {
		return err
	}
	v.Spec, v.Digest = s, d
	// A copy that shares no memory with the base index, which may be
	// released before Relocated is called.
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var cp IndexVersion
	if err := json.Unmarshal(raw, &cp); err != nil {
		return err
	}
	b.mu.Lock()
	b.relocated = append(b.relocated, relocatedVersion{name: strings.Clone(name), v: cp})
	b.mu.Unlock()
	return nil
}

// moved returns url under its new path, if a move applies.
func (b *Builder) moved(url string) (string, bool) {
	for _, old := range b.moveOrder {
		if rest, ok := strings.CutPrefix(url, old); ok && (rest == "" || rest[0] == '/') {
			return b.moves[old] + rest, true
		}
	}
	return "", false
}
