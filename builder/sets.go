package builder

import (
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
	for _, d := range dirs {
		l, err := b.Load(d)
		if err != nil || l.Recipe == nil || len(l.Problems.Errors()) > 0 {
			continue // reported by Validate
		}
		r := l.Recipe
		spec := spec.PackageSpec{Version: spec.CanonicalVersion(r.Spec.Version), Build: r.Spec.Build, Provides: r.Spec.Package.Provides, Images: r.Spec.Package.Images, Variants: r.Spec.Package.Variants}
		if x.Find(r.Metadata.Name, spec.Version, spec.Build) == nil {
			p := x.Packages[r.Metadata.Name]
			if p == nil {
				p = &index.IndexPackage{}
				x.Packages[r.Metadata.Name] = p
			}
			p.Versions = append(p.Versions, index.IndexVersion{Version: spec.Version, Build: spec.Build, Spec: spec})
		}
		if _, isSet, _ := releaseset.Members(&spec); isSet {
			sets = append(sets, setRecipe{d, r.Metadata.Name, spec.Version, spec.Build, l.Pos.Line("spec.package.variants")})
		}
	}
	out := map[string]recipe.Problems{}
	for _, s := range sets {
		if _, err := releaseset.ResolveIn(x, where, s.name, s.version, s.build); err != nil {
			out[s.dir] = append(out[s.dir], recipe.Problem{Field: "spec.package.variants", Line: s.line, Message: err.Error()})
		}
	}
	return out
}
