package sources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/spec"
)

const (
	// maxIndexSize bounds a chart repository index.yaml (further bounded
	// by the download limit).
	maxIndexSize = 256 << 20
)

// fetchChart resolves a chart source from an HTTP(S) or OCI repository.
// The repository is consulted only when the archive is not cached.
func (f *Fetcher) fetchChart(ctx context.Context, recipeDir, out string, c *recipe.ChartSource) (*Result, error) {
	pin, err := parseDigest(c.Digest)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("chart %s %s from %s", c.Name, c.Version, redact(c.Repository))
	var warnings []string
	if err := f.refusedBefore(pin, extractOptions{noSymlinks: true}); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	blob, err := f.cache.open(pin)
	if errors.Is(err, errNotCached) {
		if f.offline {
			return nil, f.offlineError(recipeDir, fmt.Sprintf("%s (%s)", what, pin))
		}
		if strings.HasPrefix(c.Repository, "oci://") {
			err = f.downloadOCIChart(ctx, c, pin, what)
		} else {
			warnings, err = f.downloadRepoChart(ctx, c, pin, what)
		}
		if err == nil {
			blob, err = f.cache.open(pin)
		}
	}
	if err != nil {
		return nil, err
	}
	defer blob.Close()
	dir, err := f.unpackChart(ctx, blob, pin, out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if strings.HasPrefix(c.Repository, "oci://") {
		f.recordPin(refOCI, ociChartRef(c), pin)
	}
	origin := strings.TrimSuffix(redact(c.Repository), "/") + "/" + c.Name + "@" + c.Version
	return &Result{Path: dir, Resolved: spec.ResolvedSource{Kind: KindChart, Origin: origin, Digest: pin}, Warnings: warnings}, nil
}

// unpackChart extracts a chart archive into out and returns the directory
// holding Chart.yaml: out itself or its only subdirectory.
func (f *Fetcher) unpackChart(ctx context.Context, blob *os.File, digest, out string) (string, error) {
	if err := f.extractBlob(ctx, blob, digest, out, extractOptions{noSymlinks: true}); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(out, "Chart.yaml")); err == nil {
		return out, nil
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return "", err
	}
	if len(entries) == 1 && entries[0].IsDir() {
		dir := filepath.Join(out, entries[0].Name())
		if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err == nil {
			return dir, nil
		}
	}
	f.cache.remove(digest)
	return "", errors.New("the archive is not a chart: no Chart.yaml at its root or in its only directory")
}

// downloadRepoChart finds the chart in its repository's index.yaml and
// downloads the archive into the cache, verified against pin. It returns a
// warning when the index lists another digest than the archive's.
func (f *Fetcher) downloadRepoChart(ctx context.Context, c *recipe.ChartSource, pin, what string) ([]string, error) {
	entry, idxURL, err := f.chartEntry(ctx, c.Repository, c.Name, c.Version)
	if err != nil {
		if idxURL == "" {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	archive, err := entry.archiveURL(idxURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var warnings []string
	listed := ""
	if entry.Digest != "" {
		listed, _ = parseDigest(entry.Digest)
	}
	_, err = f.download(ctx, archive, func(got string, n int64) error {
		if got == pin {
			if listed != "" && listed != pin {
				warnings = append(warnings, fmt.Sprintf("%s: the repository index lists %s, but the archive matches the pin %s; the repository's index is stale or wrong, tell its maintainers", what, listed, pin))
			}
			return nil
		}
		note := ""
		switch listed {
		case "":
		case got:
			note = "the repository index lists the downloaded digest too: the chart was republished upstream"
		case pin:
			note = "the repository index lists the pinned digest, but the archive served differs from its index entry: the repository is inconsistent or the download was tampered with"
		default:
			note = fmt.Sprintf("the repository index lists %s, which matches neither", listed)
		}
		return &DigestMismatchError{What: what, URL: redact(archive), Expected: pin, Got: got, Size: n, Note: note}
	})
	return warnings, err
}

// chartVersion is one entry of a chart repository index.
type chartVersion struct {
	Name    string   `yaml:"name"`
	Version string   `yaml:"version"`
	URLs    []string `yaml:"urls"`
	Digest  string   `yaml:"digest"`
}

// findVersion picks version from the versions an index lists for chart
// name (charts is how many charts the index lists).
func findVersion(versions []chartVersion, charts int, name, version string) (*chartVersion, error) {
	if versions == nil {
		return nil, fmt.Errorf("the repository index has no chart %s (it lists %d charts)", quoteName(name), charts)
	}
	for i := range versions {
		if versions[i].Version == version {
			return &versions[i], nil
		}
	}
	for i := range versions {
		if strings.TrimPrefix(versions[i].Version, "v") == strings.TrimPrefix(version, "v") {
			return &versions[i], nil
		}
	}
	var some []string
	for i := 0; i < len(versions) && i < 10; i++ {
		some = append(some, quoteName(versions[i].Version))
	}
	return nil, fmt.Errorf("the repository index has no version %s of chart %s (it lists %s)", quoteName(version), quoteName(name), strings.Join(some, ", "))
}

// archiveURL resolves the entry's first URL against the index URL; only
// http and https are allowed.
func (v *chartVersion) archiveURL(idxURL string) (string, error) {
	if len(v.URLs) == 0 {
		return "", errors.New("the repository index lists no URL for this version")
	}
	base, err := url.Parse(idxURL)
	if err != nil {
		return "", err
	}
	ref, err := url.Parse(v.URLs[0])
	if err != nil {
		return "", fmt.Errorf("the repository index lists an invalid URL %q: %w", v.URLs[0], err)
	}
	u := base.ResolveReference(ref)
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("the repository index lists %q; only http and https archive URLs are allowed: %w", v.URLs[0], ErrUnsafe)
	}
	return u.String(), nil
}

// indexMeta records the cached index.yaml of a chart repository.
type indexMeta struct {
	URL          string `json:"url"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
	Blob         string `json:"blob"`
}

// chartEntry finds version of chart name in the index of a chart
// repository and returns it with the index URL. The last index is cached
// by URL and revalidated with If-None-Match and If-Modified-Since, so an
// unchanged index is not downloaded again. The index is streamed to the
// cache and read from there with lookupChart: neither memory nor time
// grows faster than its size. Offline the cached index is used as it is.
func (f *Fetcher) chartEntry(ctx context.Context, repo, name, version string) (*chartVersion, string, error) {
	idxURL := strings.TrimSuffix(repo, "/") + "/index.yaml"
	what := "chart repository index " + redact(idxURL)
	ref := filepath.Join("index", keyOf(idxURL))
	var meta indexMeta
	cached := ""
	if b, err := f.cache.readRef(ref); err == nil && json.Unmarshal(b, &meta) == nil && meta.URL == idxURL && f.cache.has(meta.Blob) {
		cached = meta.Blob
	}
	if f.offline && cached == "" {
		return nil, "", &NotCachedError{What: what, Cache: f.cache.dir}
	}
	hdr := http.Header{}
	if cached != "" && meta.ETag != "" {
		hdr.Set("If-None-Match", meta.ETag)
	}
	if cached != "" && meta.LastModified != "" {
		hdr.Set("If-Modified-Since", meta.LastModified)
	}
	limit := min(f.maxDownload, maxIndexSize)
	blob := cached
	fresh := false
	err := f.withRetries(ctx, what, func(ctx context.Context) error {
		if f.offline {
			return nil // the cached copy, as it is
		}
		resp, err := f.get(ctx, f.client, idxURL, hdr, cached != "")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusNotModified {
			f.logf("%s: not modified, using the cached copy", what)
			blob, fresh = cached, false
			return nil
		}
		if resp.ContentLength > limit {
			return fmt.Errorf("%s: the server announces %d bytes, more than the limit of %d: %w", what, resp.ContentLength, limit, ErrTooLarge)
		}
		f.logf("downloading %s", what)
		blob, err = f.cache.put(resp.Body, limit, nil)
		if errors.Is(err, ErrTooLarge) {
			return fmt.Errorf("%s: more than the limit of %d bytes: %w", what, limit, err)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		meta = indexMeta{URL: idxURL, ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"), Blob: blob}
		fresh = true
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	file, err := f.cache.open(blob)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", what, err)
	}
	versions, charts, err := lookupChart(ctxReadSeeker{ctxReader{ctx, file}, file}, name)
	file.Close()
	if err != nil {
		if fresh && blob != cached {
			f.cache.remove(blob) // a malformed index is not kept
		}
		return nil, "", fmt.Errorf("%s: parse index.yaml: %w", what, err)
	}
	if fresh {
		b, _ := json.Marshal(meta)
		if err := f.cache.writeRef(ref, b); err != nil {
			return nil, "", err
		}
	}
	entry, err := findVersion(versions, charts, name, version)
	return entry, idxURL, err
}
