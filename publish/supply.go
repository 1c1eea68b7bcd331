package publish

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/fetchsite"
	"kbuild.dev/kbuild/sbom"
)

// fetchWorkers is how many files are fetched from a base site at once.
const fetchWorkers = 16

// maxSidecarSize caps a build info or provenance file fetched from a base
// site.
const maxSidecarSize = 16 << 20

// supplyChain writes the build info and SBOM of each version this run
// built, and the repository SBOM over every version of idx. A version
// published before keeps the files the site already has; only when the
// base is another site (WithMerge) are its missing build info and
// provenance fetched from there, concurrently — a CI job that restores
// the previous site first fetches nothing (see CONTRIBUTING.md).
func (p *Publisher) supplyChain(ctx context.Context, w *siteWriter, idx *index.RepositoryIndex, results []*builder.Result, base *Base) error {
	local := map[string]*builder.Result{}
	for _, r := range results {
		local[dist.Key(r.Name, r.Version, r.Build)] = r
	}
	w.info = map[string]*index.BuildInfo{}
	type version struct {
		name string
		pkg  *index.IndexPackage
		v    index.IndexVersion
	}
	var all []version
	var fetch []string
	remote := base != nil && p.merge != ""
	for _, name := range slices.Sorted(maps.Keys(idx.Packages)) {
		pkg := idx.Packages[name]
		for _, v := range pkg.Versions {
			all = append(all, version{name, pkg, v})
			key := dist.Key(name, v.Version, v.Build)
			if r := local[key]; r != nil {
				data, err := dist.Marshal(r.Info)
				if err != nil {
					return err
				}
				if err := w.write(BuildInfoFile(name, v.Version, v.Build), data); err != nil {
					return err
				}
				w.info[key] = &r.Info
				continue
			}
			if remote {
				for _, f := range []string{BuildInfoFile(name, v.Version, v.Build), ProvenanceFile(name, v.Version, v.Build)} {
					if !w.exists(f) {
						fetch = append(fetch, f)
					}
				}
			}
		}
	}
	if err := p.fetchAll(ctx, w, base, fetch); err != nil {
		return err
	}
	var boms []sbom.Build
	for _, x := range all {
		key := dist.Key(x.name, x.v.Version, x.v.Build)
		sb := sbom.Build{Name: x.name, Description: x.pkg.Description, Home: x.pkg.Home, Spec: x.v.Spec, Digest: x.v.Digest, Info: w.info[key]}
		if sb.Info == nil {
			info, err := w.readInfo(BuildInfoFile(x.name, x.v.Version, x.v.Build))
			if err != nil {
				return err
			}
			sb.Info, w.info[key] = info, info
		}
		boms = append(boms, sb)
		file := SBOMFile(x.name, x.v.Version, x.v.Build)
		if local[key] == nil && w.exists(file) {
			continue // an SBOM describes its version, which does not change
		}
		bom, err := sbom.ForBuild(ctx, sb, sbom.WithTimestamp(idx.Generated), sbom.WithTool(p.tool[0], p.tool[1]))
		if err != nil {
			return err
		}
		data, err := sbom.Marshal(bom)
		if err != nil {
			return err
		}
		if err := w.write(file, data); err != nil {
			return err
		}
		pauseAt("sbom")
	}
	bom, err := sbom.ForRepository(ctx, IndexFile, boms, sbom.WithTimestamp(idx.Generated), sbom.WithTool(p.tool[0], p.tool[1]))
	if err != nil {
		return err
	}
	data, err := sbom.Marshal(bom)
	if err != nil {
		return err
	}
	return w.write(RepositoryBOMFile, data)
}

// readInfo returns the build info at rel in the site, nil when absent.
func (w *siteWriter) readInfo(rel string) (*index.BuildInfo, error) {
	data, err := fetchsite.ReadFile(w.path(rel), maxSidecarSize)
	if errors.Is(err, fetchsite.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	info := new(index.BuildInfo)
	if err := dist.Unmarshal(data, info); err != nil {
		return nil, fmt.Errorf("%s: %w", w.path(rel), err)
	}
	return info, nil
}

// fetchAll fetches files from the base site into the site, fetchWorkers
// at a time; a file the base site lacks is skipped.
func (p *Publisher) fetchAll(ctx context.Context, w *siteWriter, base *Base, files []string) error {
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
				data, err := base.Site.Fetch(ctx, f, maxSidecarSize)
				if errors.Is(err, fetchsite.ErrNotFound) {
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
