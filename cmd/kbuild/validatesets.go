package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/releaseset"
)

// setFlags say where validate looks for the members of release sets.
type setFlags struct {
	index      string
	publicKeys []string
	root       string
}

func (f *setFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.index, "index", "", "published index (site directory, index.yaml or URL) whose versions release sets may pin")
	fs.StringArrayVar(&f.publicKeys, "index-public-key", nil, "public key that signs --index; repeat for several")
	fs.StringVar(&f.root, "index-root", "", "root.yaml that --index is verified under, instead of --index-public-key")
}

// check returns the problems of every release set among dirs, by
// directory: members that neither the recipes nor --index hold, and
// conflicting image pins.
func (f *setFlags) check(ctx context.Context, b *builder.Builder, dirs []string) (map[string]recipe.Problems, error) {
	x := &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{}}
	where := "the recipes validated"
	if f.index != "" {
		trust := &index.Trust{}
		switch {
		case f.root != "":
			r, err := readRoot(f.root)
			if err != nil {
				return nil, fmt.Errorf("--index-root: %w", err)
			}
			trust.TrustedRoot = r
		case len(f.publicKeys) > 0:
			keys, err := loadPublicKeys(f.publicKeys, false)
			if err != nil {
				return nil, fmt.Errorf("--index-public-key: %w", err)
			}
			trust.IndexKeys = keys
		default:
			return nil, usagef("--index needs --index-public-key or --index-root: a published index is verified before it is trusted")
		}
		pub, err := publish.ReadIndex(ctx, f.index, trust)
		if err != nil {
			return nil, err
		}
		x = pub.Verified.Index
		where = "the recipes validated or " + f.index
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
