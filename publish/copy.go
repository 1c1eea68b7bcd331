package publish

import (
	"context"
	"fmt"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/spec"
)

// VersionRef names one build of one package.
type VersionRef struct {
	Package string
	Version string
	Build   int
}

// String is "name version build N".
func (v VersionRef) String() string {
	return fmt.Sprintf("%s %s build %d", v.Package, v.Version, v.Build)
}

// CopyResult is what Copy signed.
type CopyResult struct {
	Result
	// Copied are the versions new in the site's index; the others it held
	// already, with the same digest.
	Copied []VersionRef
	// Withdrawn are versions the site held that from had withdrawn, and
	// which are withdrawn here now too.
	Withdrawn []VersionRef
}

// Copy adds versions of another index of the same repository — from, read
// and verified by siteread.ReadIndex, typically the previous suite's — to the
// site's index without rebuilding anything, and re-signs it: each entry
// is from's, spec, digest and delegated signatures unchanged, so it is
// written byte-identical. Every tombstone of from is kept here too (a
// version withdrawn there is withdrawn here). The base is WithMerge's or
// the site's index, verified as Publish verifies it; a site without an
// index gets its first. The build info, provenance and SBOM of each copied
// version are copied from from's site, the root of trust (WithRoot) and
// keys are published, and the catalog is rewritten; the index is replaced
// last, through the same signed atomic write as Publish. A version from
// lacks, or that the site withdrew, is refused and nothing is written.
func (p *Publisher) Copy(ctx context.Context, from *siteread.Published, versions []VersionRef) (*CopyResult, error) {
	if from == nil || from.Verified == nil || from.Verified.Index == nil {
		return nil, fmt.Errorf("copy: the index to copy from must be read with siteread.ReadIndex")
	}
	rootData, indexPath, start, unlock, err := p.beginWrite()
	if err != nil {
		return nil, err
	}
	defer unlock()
	b := index.NewBuilder(index.Compact())
	ref := p.merge
	if ref == "" {
		ref = indexPath
	}
	base, err := siteread.LoadBase(ctx, ref, p.baseTrust(), true, b, nil, siteread.WithTimeout(p.timeout))
	if err != nil {
		return nil, err
	}
	src := from.Verified.Index
	res := &CopyResult{}
	for _, t := range src.Withdrawn {
		removed, err := b.KeepWithdrawn(t)
		if err != nil {
			return nil, err
		}
		if removed {
			res.Withdrawn = append(res.Withdrawn, VersionRef{t.Package, t.Version, t.Build})
		}
	}
	origin := from.Site.Location(from.Site.IndexName())
	changed := map[string]bool{}
	for _, w := range res.Withdrawn {
		changed[w.Package] = true
	}
	for _, v := range versions {
		e, pkg := src.Find(v.Package, v.Version, v.Build), src.Packages[v.Package]
		if e == nil {
			return nil, fmt.Errorf("%s is not in %s; promote a version that index holds", v, origin)
		}
		if t := b.Withdrawn(v.Package, v.Version, v.Build); t != nil {
			return nil, &index.WithdrawnError{Origin: p.site, Withdrawal: *t}
		}
		had := b.Has(v.Package, v.Version, v.Build)
		rec := &spec.PackageSource{APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind,
			Metadata: spec.RecordMetadata{Name: v.Package, Annotations: map[string]string{}}, Spec: e.Spec}
		if pkg.Description != "" {
			rec.Metadata.Annotations[index.DescriptionAnnotation] = pkg.Description
		}
		if pkg.Home != "" {
			rec.Metadata.Annotations[index.HomeAnnotation] = pkg.Home
		}
		if err := b.Add(origin, rec, e.Signatures); err != nil {
			return nil, err
		}
		if !had {
			res.Copied = append(res.Copied, v)
			changed[v.Package] = true
		}
	}
	pkgs, nv := b.Counts()
	s, err := prepareSigned(indexPath, b, p.generated, p.expiry(true), p.signers)
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			s.discard()
		}
	}()
	w := newSiteWriter(p.site)
	var fetch []string
	if p.keyless == nil {
		// The identity the copied charts' keyless signatures pin.
		fetch = append(fetch, sitelayout.KeylessFile)
	}
	for _, v := range res.Copied {
		for _, f := range []string{sitelayout.BuildInfoFile(v.Package, v.Version, v.Build), sitelayout.ProvenanceFile(v.Package, v.Version, v.Build), sitelayout.SBOMFile(v.Package, v.Version, v.Build)} {
			if !w.exists(f) {
				fetch = append(fetch, f)
			}
		}
	}
	if err := p.fetchAll(ctx, w, &siteread.Base{Site: from.Site}, fetch); err != nil {
		return nil, fmt.Errorf("copying the supply-chain files from %s: %w", origin, err)
	}
	cat, err := readCatalog(s.data, w, func(n string) bool { return changed[n] })
	if err != nil {
		return nil, err
	}
	if err := p.supplyChain(ctx, w, cat, nil, base); err != nil {
		return nil, err
	}
	if err := p.copyRoot(w, rootData); err != nil {
		return nil, err
	}
	if err := p.writeKeys(w); err != nil {
		return nil, err
	}
	if err := p.catalog(w, cat, map[string]string{}); err != nil {
		return nil, err
	}
	committed = true
	if err := s.commit(&start); err != nil {
		return nil, err
	}
	res.Result = Result{Index: indexPath, Packages: pkgs, Versions: nv}
	return res, nil
}
