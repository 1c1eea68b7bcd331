package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/provenance"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/trust"
)

// ciEnv is the GitHub Actions environment the benchmark's versions claim
// to be built in: the builder and invocation ids of their provenance are
// those of a real publish workflow's run.
var ciEnv = map[string]string{
	"GITHUB_ACTIONS":      "true",
	"GITHUB_SERVER_URL":   "https://github.com",
	"GITHUB_REPOSITORY":   "example/packages",
	"GITHUB_WORKFLOW_REF": "example/packages/.github/workflows/publish.yaml@refs/heads/main",
	"GITHUB_RUN_ID":       "12345678901",
	"GITHUB_RUN_ATTEMPT":  "1",
}

// writeVersionFiles writes into site, for every record, the files kbuild
// publish writes for a version it built: the build info and SBOM of
// publish.VersionFiles and the signed provenance of publish.ProvenanceFor,
// the same functions, so that the site measured is the one a repository
// holds once every version went through kbuild publish. The SBOM and
// provenance are written only for the versions publish.Retain keeps with
// -site-keep, as kbuild publish --site-keep leaves them; the build info
// of every version.
func writeVersionFiles(site string, epoch time.Time, signer trust.Signer) (int64, error) {
	for _, d := range []string{"build", "sbom", "provenance"} {
		if err := os.MkdirAll(filepath.Join(site, d), 0o755); err != nil {
			return 0, err
		}
	}
	id, invocation := provenance.BuilderIdentity(func(k string) string { return ciEnv[k] })
	ctx := context.Background()
	var total int64
	var mu sync.Mutex
	var firstErr error
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var n int64
			err := func() error {
				for p := range jobs {
					kept := keptVersions(p)
					for v := range *versions {
						rec := record(p, v)
						info := buildInfo(p, v, rec)
						files, err := publish.VersionFiles(ctx, rec, info, epoch, "kbuild", "v0.9.0")
						if err != nil {
							return err
						}
						if !kept[dist.Key(rec.Metadata.Name, rec.Spec.Version, rec.Spec.Build)] {
							files = files[:1] // the build info only
						} else {
							prov, err := publish.ProvenanceFor(info, id, invocation, epoch, signer)
							if err != nil {
								return err
							}
							files = append(files, prov)
						}
						for _, f := range files {
							if err := os.WriteFile(filepath.Join(site, filepath.FromSlash(f.Path)), f.Data, 0o644); err != nil {
								return err
							}
							n += int64(len(f.Data))
						}
					}
				}
				return nil
			}()
			mu.Lock()
			total += n
			if err != nil && firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
			for range jobs { // drain after an error
			}
		}()
	}
	for p := range *packages {
		jobs <- p
	}
	close(jobs)
	wg.Wait()
	return total, firstErr
}

// keptVersions returns the keys of the versions of package p whose SBOM
// and provenance the site keeps with -site-keep (publish.Retain).
func keptVersions(p int) map[string]bool {
	vs := make([]index.IndexVersion, *versions)
	for v := range vs {
		rec := record(p, v)
		vs[v] = index.IndexVersion{Version: rec.Spec.Version, Build: rec.Spec.Build}
	}
	kept, _ := publish.Retain(vs, *siteKeep)
	keys := make(map[string]bool, len(kept))
	for _, v := range kept {
		keys[dist.Key(record(p, 0).Metadata.Name, v.Version, v.Build)] = true
	}
	return keys
}

// kind is one kind of file of a site: its bytes and how many there are.
type kind struct {
	bytes, files int64
}

// siteKinds returns the apparent bytes and file count under each
// top-level entry of dir (hard links counted once) and their sum.
func siteKinds(dir string) (map[string]*kind, kind, error) {
	kinds := map[string]*kind{}
	seen := map[uint64]bool{}
	var total kind
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		if st, ok := sysIno(fi); ok {
			if seen[st] {
				return nil
			}
			seen[st] = true
		}
		rel, _ := filepath.Rel(dir, p)
		top, _, nested := strings.Cut(filepath.ToSlash(rel), "/")
		if nested {
			top += "/"
		}
		k := kinds[top]
		if k == nil {
			k = &kind{}
			kinds[top] = k
		}
		k.bytes += fi.Size()
		k.files++
		total.bytes += fi.Size()
		total.files++
		return nil
	})
	return kinds, total, err
}

// countWriter counts the bytes written to it.
type countWriter int64

func (c *countWriter) Write(b []byte) (int, error) {
	*c += countWriter(len(b))
	return len(b), nil
}

// tarGzipSize returns the size of dir as a gzip'd tar (default
// compression), the form of a Pages artifact, files in lexical order.
func tarGzipSize(dir string) (int64, error) {
	var n countWriter
	zw := gzip.NewWriter(&n)
	tw := tar.NewWriter(zw)
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if fi.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return 0, err
	}
	if err := tw.Close(); err != nil {
		return 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	return int64(n), nil
}

// reportSite prints the site by kind of file, bytes per version, and the
// whole against index.yaml: apparent bytes (as du -sb counts them), file
// count and the gzip'd tar. It reports whether the site is within
// siteFactor × index.yaml.
func reportSite(site string, indexSize int64, nVersions int) (bool, error) {
	kinds, total, err := siteKinds(site)
	if err != nil {
		return false, err
	}
	fmt.Printf("site by kind of file (apparent bytes):\n")
	fmt.Printf("  %-18s %14s %9s %10s %8s\n", "entry", "bytes", "files", "B/version", "× index")
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		c := kinds[k]
		fmt.Printf("  %-18s %14d %9d %10.0f %8.3f\n", k, c.bytes, c.files, float64(c.bytes)/float64(nVersions), float64(c.bytes)/float64(indexSize))
	}
	fmt.Printf("  %-18s %14d %9d %10.0f %8.3f\n", "total", total.bytes, total.files, float64(total.bytes)/float64(nVersions), float64(total.bytes)/float64(indexSize))
	if out, err := exec.Command("du", "-sb", site).Output(); err == nil {
		fmt.Printf("du -sb: %s", out)
	}
	tgz, err := tarGzipSize(site)
	if err != nil {
		return false, err
	}
	fmt.Printf("gzip'd tar of the site: %d bytes = %.2f × index.yaml\n", tgz, float64(tgz)/float64(indexSize))
	ok := float64(total.bytes) <= siteFactor*float64(indexSize)
	verdict := "ok"
	if !ok {
		verdict = "MISSED"
	}
	fmt.Printf("site: %.0f MB in %d files = %.2f × index.yaml (target ≤ %.1f×)  %s\n", float64(total.bytes)/1e6, total.files, float64(total.bytes)/float64(indexSize), siteFactor, verdict)
	return ok, nil
}
