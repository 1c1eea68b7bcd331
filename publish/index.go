package publish

import (
	"context"
	"fmt"
	"path/filepath"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/distindex"
	"kbuild.dev/kbuild/internal/fetchsite"
)

// Index writes the signed index of every build record under distDir —
// over the WithMerge base when one is given — to out and its signature to
// out.sig, as 'kbuild repo index' does: the records are the input, so all
// of them are signed. It shares the base verification, the compact
// Builder and the atomic, content-addressed write with Publish.
func (p *Publisher) Index(ctx context.Context, distDir, out string) (*Result, error) {
	unlock, err := lockSite(filepath.Dir(out))
	if err != nil {
		return nil, err
	}
	defer unlock()
	start, err := fileID(out)
	if err != nil {
		return nil, err
	}
	// Versions are kept as their YAML: an index of 100,000 versions fits in
	// a few hundred MB. The base comes first, so that a version built again
	// with other content fails as soon as it is read.
	b := index.NewBuilder(index.Compact())
	if p.merge != "" {
		base, err := LoadBase(ctx, p.merge, p.trust, p.allowNew, b, nil, fetchsite.WithTimeout(p.timeout))
		if err != nil {
			return nil, err
		}
		if base == nil {
			fmt.Fprintf(p.stderr, "no base index at %s: starting a new index (--allow-new)\n", p.merge)
		} else {
			for _, w := range base.Verified.Warnings {
				p.warnf("base index: %s", w)
			}
		}
	}
	if err := distindex.Add(ctx, b, distDir); err != nil {
		return nil, err
	}
	pkgs, versions := b.Counts()
	s, err := prepareSigned(out, b, p.generated, p.expiry(false), p.signers)
	if err != nil {
		return nil, err
	}
	if err := s.commit(&start); err != nil {
		return nil, err
	}
	return &Result{Index: out, Packages: pkgs, Versions: versions}, nil
}

// Withdraw takes name version build out of the site's index, keeping a
// tombstone with reason so that it can never be published again, and
// re-signs the index (generated at WithGenerated, with a fresh expiry)
// and rewrites the catalog, which lists the withdrawn version with its
// reason. The base is WithMerge's or the site's index, verified as Publish
// verifies it. The charts stay in the registry: clusters that installed
// the version keep working, and a subscriber's rollback protection is
// unchanged (the new index is newer).
func (p *Publisher) Withdraw(ctx context.Context, name, version string, build int, reason string) (*index.Withdrawal, *Result, error) {
	if err := index.CheckReason(reason); err != nil {
		return nil, nil, fmt.Errorf("--reason: %w", err)
	}
	unlock, err := lockSite(p.site)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	indexPath := filepath.Join(p.site, IndexFile)
	start, err := fileID(indexPath)
	if err != nil {
		return nil, nil, err
	}
	b := index.NewBuilder(index.Compact())
	ref, allowNew := p.merge, false
	if ref == "" {
		ref = indexPath
	}
	base, err := LoadBase(ctx, ref, p.baseTrust(), allowNew, b, nil, fetchsite.WithTimeout(p.timeout))
	if err != nil {
		return nil, nil, err
	}
	t, err := b.Withdraw(name, version, build, reason, p.generated)
	if err != nil {
		return nil, nil, err
	}
	pkgs, versions := b.Counts()
	s, err := prepareSigned(indexPath, b, p.generated, p.expiry(true), p.signers)
	if err != nil {
		return nil, nil, err
	}
	committed := false
	defer func() {
		if !committed {
			s.discard()
		}
	}()
	w := &siteWriter{dir: p.site, written: map[string]bool{}}
	cat, err := readCatalog(s.data, w, func(n string) bool { return n == name })
	if err != nil {
		return nil, nil, err
	}
	if err := p.supplyChain(ctx, w, cat, nil, base); err != nil {
		return nil, nil, err
	}
	if err := p.writeKeys(w); err != nil {
		return nil, nil, err
	}
	if err := p.catalog(w, cat, map[string]string{}); err != nil {
		return nil, nil, err
	}
	committed = true
	if err := s.commit(&start); err != nil {
		return nil, nil, err
	}
	return t, &Result{Index: indexPath, Packages: pkgs, Versions: versions}, nil
}
