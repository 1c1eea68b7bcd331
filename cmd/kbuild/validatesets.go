package main

import (
	"context"
	"fmt"
	"time"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// setFlags say where validate looks for the members of release sets:
// --index, verified with --public-key, --root-key or --index-root (once
// --index-public-key and --index-root).
type setFlags struct {
	options.IndexFlags
	options.IndexRootFlag
}

// check returns the problems of every release set among dirs, by
// directory (see builder.CheckSets), with --index read and verified. A
// site that sends nothing for timeout is given up on.
func (f *setFlags) check(ctx context.Context, b *builder.Builder, dirs []string, timeout time.Duration) (map[string]recipe.Problems, error) {
	if f.Ref == "" {
		return b.CheckSets(dirs, nil, "the recipes validated"), nil
	}
	tr, err := f.Trust()
	switch {
	case err != nil:
		return nil, err
	case tr != nil && f.IndexRoot != "":
		return nil, usagef("--index: give one of --public-key, --root-key or --index-root")
	case f.IndexRoot != "":
		r, err := siteread.ReadRootFile(f.IndexRoot)
		if err != nil {
			return nil, fmt.Errorf("--index-root: %w", err)
		}
		tr = &trust.Trust{TrustedRoot: r}
	case tr == nil:
		return nil, usagef("--index needs --public-key, --root-key or --index-root: a published index is verified before it is trusted")
	}
	pub, err := siteread.ReadIndex(ctx, f.Ref, tr, siteread.WithTimeout(timeout))
	if err != nil {
		return nil, err
	}
	return b.CheckSets(dirs, pub.Verified.Index, "the recipes validated or "+f.Ref), nil
}
