package builder

import (
	"fmt"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/releaseset"
	"kbuild.dev/kbuild/spec"
)

// CheckSets returns the problems of every release set among the recipe
// directories dirs, by directory: members that neither the recipes nor
// published (a verified index, or nil; where names both in messages)
// hold, and conflicting image pins. A recipe that does not load is
// skipped: Validate reports it. published is not changed.
//
// With published (the index of a suite), it also reports what kubepkg
// would do there once the recipes are published: a member of a release
// set, in the recipes or in published, that members installed with the
// set would move off its pin (releaseset.Moves), on the recipe that
// brings the set or the build they move to; and a recipe whose version
// and build published holds with another spec (SpecChange), which
// publish refuses, instead of what a set then lacks.
func (b *Builder) CheckSets(dirs []string, published *index.RepositoryIndex, where string) map[string]recipe.Problems {
	x := &index.RepositoryIndex{}
	if published != nil {
		*x = *published
	}
	x.Packages = map[string]*index.IndexPackage{}
	if published != nil {
		for name, p := range published.Packages {
			c := *p
			c.Versions = append([]index.IndexVersion(nil), p.Versions...)
			x.Packages[name] = &c
		}
	}
	type setRecipe struct {
		dir, name, version string
		build              int
		line               int
	}
	var sets []setRecipe
	out := map[string]recipe.Problems{}
	fromRecipe := map[string]string{} // "name version build" of a recipe not published: its directory
	changed := map[string]string{}    // "name version build" published with another spec: why
	for _, d := range dirs {
		l, err := b.Load(d)
		if err != nil || l.Recipe == nil || len(l.Problems.Errors()) > 0 {
			continue // reported by Validate
		}
		r := l.Recipe
		spec := spec.PackageSpec{Version: spec.CanonicalVersion(r.Spec.Version), Build: r.Spec.Build, Provides: r.Spec.Package.Provides, Images: r.Spec.Package.Images, Variants: r.Spec.Package.Variants}
		key := index.SetMember{Package: r.Metadata.Name, Version: spec.Version, Build: spec.Build}.String()
		if pub := x.Find(r.Metadata.Name, spec.Version, spec.Build); pub == nil {
			p := x.Packages[r.Metadata.Name]
			if p == nil {
				p = &index.IndexPackage{}
				x.Packages[r.Metadata.Name] = p
			}
			p.Versions = append(p.Versions, index.IndexVersion{Version: spec.Version, Build: spec.Build, Spec: spec})
			fromRecipe[key] = d
		} else if err := SpecChange(r, pub); err != nil {
			changed[key] = err.Error()
			out[d] = append(out[d], recipe.Problem{Field: "spec.build", Line: l.Pos.Line("spec.build"), Message: err.Error()})
		}
		if _, isSet, _ := releaseset.Members(&spec); isSet {
			sets = append(sets, setRecipe{d, r.Metadata.Name, spec.Version, spec.Build, l.Pos.Line("spec.package.variants")})
		}
	}
	setDir := map[string]setRecipe{}
	for _, s := range sets {
		setDir[index.SetMember{Package: s.name, Version: s.version, Build: s.build}.String()] = s
		if _, err := releaseset.ResolveIn(x, where, s.name, s.version, s.build); err != nil {
			msg := err.Error()
			if e := x.Find(s.name, s.version, s.build); e != nil {
				if ms, _, _ := releaseset.Members(&e.Spec); ms != nil {
					for _, m := range ms {
						if why, ok := changed[m.String()]; ok {
							msg = fmt.Sprintf("%v: member %s: %s; the set cannot resolve against the published build until then", releaseset.ErrInvalid, m, why)
							break
						}
					}
				}
			}
			out[s.dir] = append(out[s.dir], recipe.Problem{Field: "spec.package.variants", Line: s.line, Message: msg})
		}
	}
	if published == nil {
		return out
	}
	had := map[string]bool{}
	for _, m := range releaseset.Moves(published) {
		had[m.String()] = true
	}
	for _, m := range releaseset.Moves(x) {
		if had[m.String()] {
			continue
		}
		msg := m.String() + " in " + where + "; a release set's members follow ~MAJOR.MINOR on their own, so pin the new build in a new build of the set, or give the member a new minor"
		if s, ok := setDir[m.Set.String()]; ok {
			out[s.dir] = append(out[s.dir], recipe.Problem{Field: "spec.package.variants", Line: s.line, Message: msg})
		} else if d, ok := fromRecipe[index.SetMember{Package: m.Member.Package, Version: m.To.Version, Build: m.To.Build}.String()]; ok {
			out[d] = append(out[d], recipe.Problem{Field: "spec.version", Message: msg})
		}
	}
	return out
}
