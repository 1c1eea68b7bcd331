package publish

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/sbom"
	"kbuild.dev/kbuild/site"
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

// readCatalog reads the signed index data. A package gets its page
// rewritten when changed says so or the site has no page for it yet. The
// returned index shares data, which must stay mapped while it is used.
func readCatalog(data []byte, w *siteWriter, changed func(name string) bool) (*catalogData, error) {
	c := &catalogData{counts: map[string]int{}}
	var mu sync.Mutex
	summaries := map[string]*index.IndexPackage{}
	x, err := index.ParseIndexFunc(data, func(name string, p *index.IndexPackage) (bool, error) {
		vs := make([]sbom.VersionBOM, len(p.Versions))
		for i, v := range p.Versions {
			vs[i] = sbom.VersionBOM{Name: strings.Clone(name), Version: strings.Clone(v.Version), Build: v.Build, Digest: strings.Clone(v.Digest), BOM: SBOMFile(name, v.Version, v.Build)}
		}
		full := changed(name) || !w.exists(site.PagePath(name))
		var sum *index.IndexPackage
		if !full {
			// Only the newest version (versions are written newest
			// first), copied: the package's memory is used again once it
			// is dropped.
			b, err := json.Marshal(p.Versions[0])
			if err != nil {
				return false, err
			}
			sum = &index.IndexPackage{Description: strings.Clone(p.Description), Home: strings.Clone(p.Home), Versions: make([]index.IndexVersion, 1)}
			if err := json.Unmarshal(b, &sum.Versions[0]); err != nil {
				return false, fmt.Errorf("package %s: %w", name, err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		c.versions = append(c.versions, vs...)
		if full {
			c.pages = append(c.pages, strings.Clone(name))
		} else {
			summaries[strings.Clone(name)] = sum
			c.counts[strings.Clone(name)] = len(p.Versions)
		}
		return full, nil
	})
	if err != nil {
		return nil, fmt.Errorf("the index just written does not parse back: %w", err)
	}
	for name, sum := range summaries {
		x.Packages[name] = sum
	}
	for _, t := range x.Withdrawn {
		if changed(t.Package) || !w.exists(site.PagePath(t.Package)) {
			c.pages = append(c.pages, t.Package)
		}
	}
	slices.Sort(c.pages)
	c.pages = slices.Compact(c.pages)
	slices.SortFunc(c.versions, func(a, b sbom.VersionBOM) int {
		return strings.Compare(dist.Key(a.Name, a.Version, a.Build), dist.Key(b.Name, b.Version, b.Build))
	})
	c.idx = x
	return c, nil
}

// catalog writes index.html and the pages of the packages c names,
// linking the supply-chain files the site has for their versions.
func (p *Publisher) catalog(w *siteWriter, c *catalogData, manifests map[string]string) error {
	published := []string{SignatureFile}
	for _, f := range []string{RootFile, ScanFile} {
		if w.exists(f) {
			published = append(published, f)
		}
	}
	for _, name := range c.pages {
		pkg := c.idx.Packages[name]
		if pkg == nil {
			continue
		}
		for _, v := range pkg.Versions {
			for _, f := range []string{SBOMFile(name, v.Version, v.Build), ProvenanceFile(name, v.Version, v.Build)} {
				if w.exists(f) {
					published = append(published, f)
				}
			}
			key := dist.Key(name, v.Version, v.Build)
			info := w.info[key]
			if info == nil {
				var err error
				if info, err = w.readInfo(BuildInfoFile(name, v.Version, v.Build)); err != nil {
					return err
				}
			}
			if info != nil {
				for _, ch := range info.Charts {
					manifests[ch.Digest] = ch.Manifest
				}
			}
		}
	}
	opts := []site.Option{site.WithPublished(published...), site.WithManifestDigests(manifests), site.WithPages(c.pages...), site.WithVersionCounts(c.counts)}
	if p.title != "" {
		opts = append(opts, site.WithTitle(p.title))
	}
	return site.Write(p.site, c.idx, opts...)
}
