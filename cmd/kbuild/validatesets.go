package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/fetchsite"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/releaseset"
)

// setFlags say where validate looks for the members of release sets:
// --index, verified with --public-key, --root-key or --index-root (once
// --index-public-key and --index-root).
type setFlags struct {
	indexFlags
	indexRootFlag
}

func (f *setFlags) addFlags(fs *pflag.FlagSet) {
	f.indexFlags.addFlags(fs, "whose versions release sets may pin")
	f.indexRootFlag.addFlags(fs)
	addAlias(fs, "index-public-key", "", "public-key")
}

// check returns the problems of every release set among dirs, by
// directory: members that neither the recipes nor --index hold, and
// conflicting image pins. A site that sends nothing for timeout is given
// up on.
func (f *setFlags) check(ctx context.Context, b *builder.Builder, dirs []string, timeout time.Duration) (map[string]recipe.Problems, error) {
	x := &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{}}
	where := "the recipes validated"
	if f.ref != "" {
		trust, err := f.trust()
		switch {
		case err != nil:
			return nil, err
		case trust != nil && f.indexRoot != "":
			return nil, usagef("--index: give one of --public-key, --root-key or --index-root")
		case f.indexRoot != "":
			r, err := readRoot(f.indexRoot)
			if err != nil {
				return nil, fmt.Errorf("--index-root: %w", err)
			}
			trust = &index.Trust{TrustedRoot: r}
		case trust == nil:
			return nil, usagef("--index needs --public-key, --root-key or --index-root: a published index is verified before it is trusted")
		}
		pub, err := publish.ReadIndex(ctx, f.ref, trust, fetchsite.WithTimeout(timeout))
		if err != nil {
			return nil, err
		}
		x = pub.Verified.Index
		where = "the recipes validated or " + f.ref
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
			continue // reported by validateOne
		}
		r := l.Recipe
		spec := index.PackageSpec{Version: r.Spec.Version, Build: r.Spec.Build, Images: r.Spec.Package.Images, Variants: r.Spec.Package.Variants}
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
	return out, nil
}
