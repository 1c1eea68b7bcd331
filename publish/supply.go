package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/provenance"
	"kbuild.dev/kbuild/sbom"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// fetchWorkers is how many files are fetched from a base site at once.
const fetchWorkers = 16

// supplyChain writes the build info and SBOM of each version this run
// built (attaching the SBOM to its charts as an OCI referrer), marks the
// files of versions beyond WithSiteKeep for removal (planRemovals), and
// writes the repository SBOM, which lists every version of the index with
// a reference to its own SBOM (sbom/<key>.cdx.json, or for a version whose
// file the site does not hold, its charts in the registry) rather than
// inlining them. A version published before keeps the files the site
// already has: nothing is rewritten for it. Only when the base is another
// site (WithMerge) and the site directory is not a copy of it (its
// index.yaml is another, and it lacks the base index's signature by digest) are
// the build info, provenance and SBOM files that the directory lacks
// fetched from there, concurrently; a CI job that restores the previous
// site first fetches nothing (see CONTRIBUTING.md).
func (p *Publisher) supplyChain(ctx context.Context, w *siteWriter, cat *catalogData, results []*builder.Result, base *siteread.Base) error {
	w.info = map[string]*spec.BuildInfo{}
	for _, r := range results {
		files, err := VersionFiles(ctx, &r.Record, &r.Info, p.generated, p.tool[0], p.tool[1])
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := w.write(f.Path, f.Data); err != nil {
				return err
			}
			if f.Path == sitelayout.SBOMFile(r.Name, r.Version, r.Build) {
				if err := p.attachSBOM(ctx, r, f.Data); err != nil {
					return err
				}
			}
		}
		w.info[dist.Key(r.Name, r.Version, r.Build)] = &r.Info
		pauseAt("sbom")
	}
	if base != nil && p.merge != "" && !w.copyOf(base.Digest) {
		var fetch []string
		for _, v := range cat.versions {
			for _, f := range []string{sitelayout.BuildInfoFile(v.Name, v.Version, v.Build), sitelayout.ProvenanceFile(v.Name, v.Version, v.Build), v.BOM} {
				if !w.exists(f) {
					fetch = append(fetch, f)
				}
			}
		}
		if len(fetch) > 0 {
			p.warnf("%s is not a copy of the published site: fetching the %d build info, provenance and SBOM files it lacks from %s (restore the previous site first to skip this; see CONTRIBUTING.md)",
				p.site, len(fetch), base.Site.Location(""))
		}
		if err := p.fetchAll(ctx, w, base, fetch); err != nil {
			return err
		}
	}
	if err := p.planRemovals(ctx, w, cat, results); err != nil {
		return err
	}
	// A version whose SBOM the site does not hold (older than the newest
	// WithSiteKeep of its package) is referenced through its charts, of
	// which the SBOM is an OCI referrer.
	for i := range cat.versions {
		if v := &cat.versions[i]; len(v.Referrers) > 0 && !w.exists(v.BOM) {
			v.BOM = ""
		}
	}
	bom, err := sbom.ForRepositoryRefs(sitelayout.IndexFile, cat.versions, sbom.WithTimestamp(p.generated), sbom.WithTool(p.tool[0], p.tool[1]))
	if err != nil {
		return err
	}
	data, err := sbom.Marshal(bom)
	if err != nil {
		return err
	}
	return w.write(sitelayout.RepositoryBOMFile, data)
}

// SiteFile is a file of a site: its path relative to the site's root
// (slash-separated) and its bytes.
type SiteFile struct {
	Path string
	Data []byte
}

// VersionFiles returns the build info (sitelayout.BuildInfoFile) and the SBOM
// (sitelayout.SBOMFile) of one built version, rec and its build info, exactly as
// Publish writes them: generated is the SBOM's timestamp, tool and
// version name the program that wrote it. Its provenance is
// ProvenanceFor's.
func VersionFiles(ctx context.Context, rec *spec.PackageSource, info *spec.BuildInfo, generated time.Time, tool, version string) ([]SiteFile, error) {
	name, v, build := rec.Metadata.Name, rec.Spec.Version, rec.Spec.Build
	data, err := dist.Marshal(info)
	if err != nil {
		return nil, err
	}
	files := []SiteFile{{sitelayout.BuildInfoFile(name, v, build), data}}
	digest, err := rec.Spec.Digest()
	if err != nil {
		return nil, err
	}
	ann := rec.Metadata.Annotations
	sb := sbom.Build{Name: name, Description: ann[index.DescriptionAnnotation], Home: ann[index.HomeAnnotation], Spec: rec.Spec, Digest: digest, Info: info}
	bom, err := sbom.ForBuild(ctx, sb, sbom.WithTimestamp(generated), sbom.WithTool(tool, version))
	if err != nil {
		return nil, err
	}
	if data, err = sbom.Marshal(bom); err != nil {
		return nil, err
	}
	return append(files, SiteFile{sitelayout.SBOMFile(name, v, build), data}), nil
}

// ProvenanceFor returns the signed provenance (sitelayout.ProvenanceFile) of one
// built version as Publish writes it and attaches it to the version's
// charts: the DSSE envelope of builder.Provenance, signed by signer.
func ProvenanceFor(info *spec.BuildInfo, builderID, invocation string, epoch time.Time, signer trust.Signer) (SiteFile, error) {
	env, err := provenance.Sign(provenance.New(info, builderID, invocation, epoch), signer)
	if err != nil {
		return SiteFile{}, err
	}
	return SiteFile{sitelayout.ProvenanceFile(info.Package, info.Version, info.Build), env}, nil
}

// copyOf reports whether the site directory is a copy of the site whose
// index has digest, or a later one: it has that index's signature by
// digest (which only a publish of that index wrote), or its index.yaml is
// that index.
func (w *siteWriter) copyOf(digest string) bool {
	if w.exists(sitelayout.ByHashSignatureOf(strings.TrimPrefix(digest, "sha256:"))) {
		return true
	}
	d, err := fileDigest(w.path(sitelayout.IndexFile))
	return err == nil && d == digest
}

// buildInfo returns the build info of name version build: this run's,
// or else the site's file; nil when the site has none.
func (w *siteWriter) buildInfo(name, version string, build int) (*spec.BuildInfo, error) {
	if info := w.info[dist.Key(name, version, build)]; info != nil {
		return info, nil
	}
	return w.readInfo(sitelayout.BuildInfoFile(name, version, build))
}

// readInfo returns the build info at rel in the site, nil when absent.
func (w *siteWriter) readInfo(rel string) (*spec.BuildInfo, error) {
	data, err := siteread.ReadFile(w.path(rel), siteread.MaxSidecarSize)
	if errors.Is(err, siteread.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	info := new(spec.BuildInfo)
	if err := dist.Unmarshal(data, info); err != nil {
		return nil, fmt.Errorf("%s: %w", w.path(rel), err)
	}
	return info, nil
}

// fetchAll fetches files from the base site into the site, fetchWorkers
// at a time; a file the base site lacks is skipped.
func (p *Publisher) fetchAll(ctx context.Context, w *siteWriter, base *siteread.Base, files []string) error {
	if len(files) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	errs := make([]error, len(files))
	var mu sync.Mutex // guards w.written
	var wg sync.WaitGroup
	for range min(fetchWorkers, len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				f := files[i]
				data, err := base.Site.Fetch(ctx, f, siteread.MaxSidecarSize)
				if errors.Is(err, siteread.ErrNotFound) {
					continue
				}
				if err == nil {
					mu.Lock()
					err = w.write(f, data)
					mu.Unlock()
				}
				if err != nil {
					errs[i] = err
					cancel()
				}
			}
		}()
	}
	for i := range files {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return errors.Join(errs...)
}
