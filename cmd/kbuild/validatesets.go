package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/recipe"
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
// directory (see builder.CheckSets), with --index read and verified.
func (f *setFlags) check(ctx context.Context, b *builder.Builder, dirs []string) (map[string]recipe.Problems, error) {
	var x *index.RepositoryIndex
	where := "the recipes validated"
	if f.index != "" {
		trust := &index.Trust{}
		switch {
		case f.root != "":
			r, err := publish.ReadRootFile(f.root)
			if err != nil {
				return nil, fmt.Errorf("--index-root: %w", err)
			}
			trust.TrustedRoot = r
		case len(f.publicKeys) > 0:
			keys, err := index.LoadPublicKeys(f.publicKeys, false)
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
	return b.CheckSets(dirs, x, where), nil
}
