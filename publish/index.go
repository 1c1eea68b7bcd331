package publish

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/internal/chartpin"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
)

// Index writes the signed index of every build record under distDir —
// over the WithMerge base when one is given — to out and its signature to
// out.sig, as 'kbuild repo index' does: the records are the input, so all
// of them are signed. It shares the base verification, the compact
// Builder and the atomic, content-addressed write with Publish.
//
// As kubepkg repo index does, a record naming a chart without a digest has
// it pinned by WithChartPinner's function, WithRelocate moves the base's
// charts, and with no signers the index is written unsigned (out "-" is
// then the standard output) with a warning.
func (p *Publisher) Index(ctx context.Context, distDir, out string) (*Result, error) {
	if out == "-" && len(p.signers) > 0 {
		return nil, errors.New("a signed index needs a file to write its signature beside, not the standard output")
	}
	if out != "-" {
		unlock, err := lockSite(filepath.Dir(out))
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	start, err := fileID(out)
	if err != nil {
		return nil, err
	}
	// Versions are kept as their YAML: an index of 100,000 versions fits in
	// a few hundred MB. The base comes first, so that a version built again
	// with other content fails as soon as it is read.
	b := index.NewBuilder(index.Compact(), index.Relocate(p.moves))
	if p.merge != "" {
		base, err := siteread.LoadBase(ctx, p.merge, p.trust, p.allowNew, b, nil, siteread.WithTimeout(p.timeout))
		if err != nil {
			return nil, err
		}
		if base == nil {
			fmt.Fprintf(p.stderr, "no base index at %s: starting a new index, as allowed\n", p.merge)
		} else {
			for _, w := range base.Verified.Warnings {
				p.warnf("base index: %s", w)
			}
		}
		if err := p.checkRelocated(ctx, b); err != nil {
			return nil, err
		}
	}
	if err := dist.AddPinning(ctx, b, distDir, p.pin); err != nil {
		return nil, err
	}
	pkgs, versions := b.Counts()
	if len(p.signers) == 0 {
		return p.writeUnsigned(out, b, pkgs, versions)
	}
	s, err := writeSigned(out, b, p.generated, p.expiry(false), p.signers)
	if err != nil {
		return nil, err
	}
	if err := s.commit(&start); err != nil {
		return nil, err
	}
	return &Result{Index: out, Packages: pkgs, Versions: versions}, nil
}

// writeUnsigned writes the index of b to path (through a temporary file
// and a rename) or, for "-", to the standard output, with no signature:
// kubepkg subscribers accept it only with allowUnsigned. A signature left
// beside path from an earlier index would not match; it is removed.
func (p *Publisher) writeUnsigned(path string, b *index.Builder, pkgs, versions int) (*Result, error) {
	data, err := b.Marshal(p.generated, p.expiry(false))
	if err != nil {
		return nil, err
	}
	res := &Result{Index: path, Packages: pkgs, Versions: versions, Unsigned: true}
	if path == "-" {
		_, err := p.stdout.Write(data)
		return res, err
	}
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return nil, err
	}
	if err := os.Remove(path + ".sig"); err == nil {
		fmt.Fprintf(p.stderr, "removed %s.sig, which signed an earlier index\n", path)
	}
	return res, nil
}

// checkRelocated pulls every chart WithRelocate moved from its new place
// and checks its archive digest: a move only rewrites where subscribers
// look.
func (p *Publisher) checkRelocated(ctx context.Context, b *index.Builder) error {
	x := b.Relocated()
	if x == nil {
		return nil
	}
	n, bad := chartpin.Check(ctx, x, chartpin.Options{PlainHTTP: p.plainHTTP, Timeout: p.timeout})
	for _, m := range bad {
		fmt.Fprintf(p.stderr, "refused: %v\n", m)
	}
	if len(bad) > 0 {
		return &InputError{Input: "relocate", Err: fmt.Errorf("%d of %d moved charts are not at their new place with their published digest; copy them there first (for example with crane cp or skopeo copy); nothing was written", len(bad), n)}
	}
	_, versions := x.Counts()
	fmt.Fprintf(p.stderr, "relocated %d published versions; %d charts are at their new place with their published digests\n", versions, n)
	return nil
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
	if len(p.signers) == 0 {
		return nil, nil, errNoSigner
	}
	if err := index.CheckReason(reason); err != nil {
		return nil, nil, &InputError{Input: "reason", Err: err}
	}
	unlock, err := lockSite(p.site)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	indexPath := filepath.Join(p.site, sitelayout.IndexFile)
	start, err := fileID(indexPath)
	if err != nil {
		return nil, nil, err
	}
	b := index.NewBuilder(index.Compact())
	ref, allowNew := p.merge, false
	if ref == "" {
		ref = indexPath
	}
	base, err := siteread.LoadBase(ctx, ref, p.baseTrust(), allowNew, b, nil, siteread.WithTimeout(p.timeout))
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
	w := newSiteWriter(p.site)
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
	return t, &Result{Index: indexPath, Packages: pkgs, Versions: versions, Left: cat.idx.Packages[name]}, nil
}
