package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/sbom"
	"kbuild.dev/kbuild/sigbundle"
	"kbuild.dev/kbuild/site"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// catalogData is what the catalog and the repository SBOM need of the
// index just signed, read in one pass without holding every version: the
// packages whose pages are rewritten in full, and of the others only
// their newest version and how many they have.
type catalogData struct {
	idx      *index.RepositoryIndex
	pages    []string       // packages whose pages are written
	counts   map[string]int // versions of the summarized packages
	versions []sbom.VersionBOM
}

// collector gathers catalogData from packages as they are decoded: in
// full those that keep(name) names or that have no page yet, of the others
// only their newest version and how many they have.
type collector struct {
	w    *siteWriter
	keep func(name string) bool
	mu   sync.Mutex
	c    *catalogData
	full map[string]bool
}

func newCollector(w *siteWriter, keep func(string) bool) *collector {
	return &collector{w: w, keep: keep, full: map[string]bool{},
		c: &catalogData{idx: &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{}}, counts: map[string]int{}}}
}

// published returns the published entry of name version build, in full
// when name is a package the collector keeps (one with a recipe), or nil.
func (cl *collector) published(name, version string, build int) *index.IndexVersion {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if !cl.keep(name) {
		return nil
	}
	return cl.c.idx.Find(name, version, build)
}

// visit takes what the catalog needs of package name; p's memory may be
// used again once it returns, so what is kept is copied.
func (cl *collector) visit(name string, p *index.IndexPackage) error {
	vs := make([]sbom.VersionBOM, len(p.Versions))
	for i, v := range p.Versions {
		vs[i] = sbom.VersionBOM{Name: strings.Clone(name), Version: strings.Clone(v.Version), Build: v.Build, Digest: strings.Clone(v.Digest), BOM: sitelayout.SBOMFile(name, v.Version, v.Build), Referrers: chartReferrerRefs(&v.Spec)}
	}
	full := cl.keep(name) || !cl.w.exists(site.PagePath(name))
	kept := p.Versions
	if !full {
		kept = p.Versions[:1] // versions are written newest first
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return err
	}
	cp := &index.IndexPackage{Description: strings.Clone(p.Description), Home: strings.Clone(p.Home)}
	if err := json.Unmarshal(b, &cp.Versions); err != nil {
		return fmt.Errorf("package %s: %w", name, err)
	}
	name = strings.Clone(name)
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.c.versions = append(cl.c.versions, vs...)
	cl.c.idx.Packages[name] = cp
	if full {
		cl.full[name] = true
	} else {
		cl.c.counts[name] = len(p.Versions)
	}
	return nil
}

// addBuilt adds the versions this run built (not in the base) to the
// packages they belong to, whose pages are rewritten.
func (cl *collector) addBuilt(results []*builder.Result, inBase func(name, version string, build int) bool) error {
	for _, r := range results {
		if inBase(r.Name, r.Version, r.Build) {
			continue
		}
		digest, err := r.Record.Spec.Digest()
		if err != nil {
			return err
		}
		pkg := cl.c.idx.Packages[r.Name]
		if pkg == nil || !cl.full[r.Name] {
			if pkg != nil {
				return fmt.Errorf("package %s: its published versions were not kept for its page", r.Name)
			}
			pkg = &index.IndexPackage{}
			cl.c.idx.Packages[r.Name] = pkg
			cl.full[r.Name] = true
		}
		if d := r.Record.Metadata.Annotations[index.DescriptionAnnotation]; d != "" {
			pkg.Description = d
		}
		if h := r.Record.Metadata.Annotations[index.HomeAnnotation]; h != "" {
			pkg.Home = h
		}
		pkg.Versions = append(pkg.Versions, index.IndexVersion{Version: r.Version, Build: r.Build, Digest: digest, Spec: r.Record.Spec})
		cl.c.versions = append(cl.c.versions, sbom.VersionBOM{Name: r.Name, Version: r.Version, Build: r.Build, Digest: digest, BOM: sitelayout.SBOMFile(r.Name, r.Version, r.Build), Referrers: chartReferrerRefs(&r.Record.Spec)})
	}
	return nil
}

// done returns the catalog data of an index generated and expiring at the
// times given, with the tombstones withdrawn; pages are rewritten for the
// packages changed names and those without one.
func (cl *collector) done(generated, expires time.Time, withdrawn []index.Withdrawal, changed func(string) bool) *catalogData {
	c := cl.c
	c.idx.APIVersion, c.idx.Kind, c.idx.Generated, c.idx.Expires = index.IndexAPIVersion, index.IndexKind, generated, expires
	c.idx.Withdrawn = withdrawn
	for name := range cl.full {
		if changed(name) || !cl.w.exists(site.PagePath(name)) {
			c.pages = append(c.pages, name)
		}
	}
	for _, t := range withdrawn {
		if changed(t.Package) || !cl.w.exists(site.PagePath(t.Package)) {
			c.pages = append(c.pages, t.Package)
		}
	}
	slices.Sort(c.pages)
	c.pages = slices.Compact(c.pages)
	slices.SortFunc(c.versions, func(a, b sbom.VersionBOM) int {
		return strings.Compare(dist.Key(a.Name, a.Version, a.Build), dist.Key(b.Name, b.Version, b.Build))
	})
	return c
}

// readCatalog reads the catalog data of the signed index data, whose
// pages are rewritten for the packages changed names (and those without
// one).
func readCatalog(data []byte, w *siteWriter, changed func(name string) bool) (*catalogData, error) {
	cl := newCollector(w, changed)
	x, err := index.ParseIndexFunc(data, func(name string, p *index.IndexPackage) (bool, error) {
		return false, cl.visit(name, p)
	})
	if err != nil {
		return nil, fmt.Errorf("the index just written does not parse back: %w", err)
	}
	return cl.done(x.Generated, x.Expires, slices.Clone(x.Withdrawn), changed), nil
}

// catalog writes index.html and the pages of the packages c names,
// linking the supply-chain files the site has (and keeps) for the
// versions a page shows in full; for the others, and for those shown
// whose files the site no longer holds, pages point at the OCI referrers
// of their charts (site.WithReferrers).
func (p *Publisher) catalog(w *siteWriter, c *catalogData, manifests map[string]string) error {
	published := []string{sitelayout.SignatureFile}
	for _, f := range []string{sitelayout.RootFile, sitelayout.ScanFile} {
		if w.exists(f) {
			published = append(published, f)
		}
	}
	for _, name := range c.pages {
		pkg := c.idx.Packages[name]
		if pkg == nil {
			continue
		}
		// A page shows its newest site.MaxDetailed versions in full, with
		// their files and charts by digest; the others are rows of its
		// versions table, for which nothing is read.
		shown, _ := Retain(pkg.Versions, site.MaxDetailed)
		for _, v := range shown {
			for _, f := range []string{sitelayout.SBOMFile(name, v.Version, v.Build), sitelayout.ProvenanceFile(name, v.Version, v.Build)} {
				if w.exists(f) {
					published = append(published, f)
				}
			}
			info, err := w.buildInfo(name, v.Version, v.Build)
			if err != nil {
				return err
			}
			if info != nil {
				for _, ch := range info.Charts {
					manifests[ch.Digest] = ch.Manifest
				}
			}
		}
	}
	keys, err := p.siteKeys()
	if err != nil {
		return err
	}
	opts := []site.Option{site.WithPublished(published...), site.WithManifestDigests(manifests), site.WithPages(c.pages...), site.WithVersionCounts(c.counts), site.WithReferrers(), keys}
	if p.title != "" {
		opts = append(opts, site.WithTitle(p.title))
	}
	if p.suites != nil {
		opts = append(opts, site.WithSuites(p.suites))
	} else {
		// A site without suites keeps its compatibility matrices beside
		// its catalog (site.CompatDir); its pages link those there.
		compat, err := site.ListMatrices(p.site)
		if err != nil {
			return err
		}
		opts = append(opts, site.WithCompat(compat...))
	}
	if id, ok := p.keylessIdentity(); ok {
		opts = append(opts, site.WithKeyless(id.Issuer, id.Subject, id.Repository))
	}
	return site.Write(p.site, c.idx, opts...)
}

// keylessIdentity is the identity the charts' keyless signatures pin:
// WithKeyless's, or the one the site names (sitelayout.KeylessFile, as a
// keyless publish or a copy from a keyless suite wrote it), so that a
// withdrawal or a promotion keeps showing it; a file that does not parse
// is warned about and ignored.
func (p *Publisher) keylessIdentity() (sigbundle.Identity, bool) {
	if p.keyless != nil {
		return p.keyless.Identity(), true
	}
	f := filepath.Join(p.site, filepath.FromSlash(sitelayout.KeylessFile))
	data, err := os.ReadFile(f)
	if err != nil {
		return sigbundle.Identity{}, false
	}
	var id sigbundle.Identity
	if err := json.Unmarshal(data, &id); err != nil {
		p.warnf("%s: %v; the catalog shows no keyless identity", f, err)
		return sigbundle.Identity{}, false
	}
	if err := id.Validate(); err != nil {
		p.warnf("%s: %v; the catalog shows no keyless identity", f, err)
		return sigbundle.Identity{}, false
	}
	return id, true
}

// siteKeys returns the keys the catalog's Repository snippet pins: the
// root keys of version 1 of the root (root/1.yaml beside WithRoot's file)
// with their threshold, or else the public keys of the signers. Without
// WithRoot, a site that already publishes a root chain (root/1.yaml, as
// a publish with a root wrote it) keeps pinning its root keys, so a
// withdrawal or a re-signing does not change what its pages tell
// subscribers to trust; a root/1.yaml that does not parse is warned about
// and the signers' keys are shown.
func (p *Publisher) siteKeys() (site.Option, error) {
	var r *trust.Root
	if p.root == "" {
		first := filepath.Join(p.site, sitelayout.RootDir, "1.yaml")
		data, err := os.ReadFile(first)
		if err == nil {
			if r, err = trust.ParseRoot(data); err != nil {
				p.warnf("%s: %v; the catalog shows the signing keys instead of the root's", first, err)
				r = nil
			}
		}
		if r == nil {
			pems := make([]string, len(p.signers))
			for i, s := range p.signers {
				pems[i] = string(s.Public().PEM())
			}
			return site.WithPublicKeys(pems...), nil
		}
	} else {
		data, err := os.ReadFile(p.root)
		if err != nil {
			return nil, err
		}
		r, err = trust.ParseRoot(data)
		if err == nil && r.Signed.Version != 1 {
			var first []byte
			if first, err = os.ReadFile(filepath.Join(filepath.Dir(p.root), sitelayout.RootDir, "1.yaml")); err == nil {
				r, err = trust.ParseRoot(first)
			}
		}
		if err != nil {
			return nil, &InputError{Input: "root", Err: fmt.Errorf("%s: the catalog pins version 1 of the root: %w", p.root, err)}
		}
	}
	role := r.Signed.Roles[trust.RoleRoot]
	pems := make([]string, 0, len(role.KeyIDs))
	for _, id := range role.KeyIDs {
		pems = append(pems, r.Signed.Keys[id])
	}
	return site.WithRootKeys(role.Threshold, pems...), nil
}

// Recatalog rewrites index.html and the pages of the packages named from
// the site's signed index, re-signing nothing: when another suite of the
// repository changed what it holds, this suite's pages say so
// (WithSuites). The index is verified as Publish verifies its base
// (WithMerge's trust, else the signing keys), an expired one accepted; a
// site without an index is left alone (found false). Names the index
// does not hold, nor withdrew, are skipped.
func (p *Publisher) Recatalog(ctx context.Context, names []string) (found bool, err error) {
	unlock, err := lockSite(p.site)
	if err != nil {
		return false, err
	}
	defer unlock()
	s, err := siteread.Open(p.site, siteread.WithTimeout(p.timeout))
	if err != nil {
		return false, err
	}
	v, err := s.Verify(ctx, p.baseTrust(), trust.VerifyOptions{Now: now(), AllowExpired: true})
	switch {
	case errors.Is(err, siteread.ErrNotFound):
		return false, nil
	case err != nil:
		return true, fmt.Errorf("index %s: %w; its catalog was not rewritten", s.Location(s.IndexName()), err)
	}
	w := newSiteWriter(p.site)
	c := &catalogData{idx: v.Index}
	for _, n := range names {
		if v.Index.Packages[n] != nil || slices.ContainsFunc(v.Index.Withdrawn, func(t index.Withdrawal) bool { return t.Package == n }) {
			c.pages = append(c.pages, n)
		}
	}
	slices.Sort(c.pages)
	return true, p.catalog(w, c, map[string]string{})
}
