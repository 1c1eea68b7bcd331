package sources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"kbuild.dev/kbuild/recipe"
)

// Pin downloads an unpinned url or chart source into the cache and returns
// it with its pin filled in: sha256 for a url, the archive digest for a
// chart. This is trust on first use: `kbuild init` writes the pin into a
// draft recipe for the maintainer to review, and every later build verifies
// against it. A chart whose repository index lists a digest must match it.
//
// Offline, Pin takes the pin from the cache: for a chart of an HTTP(S)
// repository from the cached index.yaml, when the archive it lists is
// cached too; for a url (other than file://, which is read as online) and
// an OCI chart from the reference an earlier Pin or Fetch recorded
// (refs/url, refs/oci), when its blob is still cached. Anything else fails
// with an error wrapping ErrOffline that names the source.
func (f *Fetcher) Pin(ctx context.Context, src recipe.Source) (recipe.Source, error) {
	accept := func(string, int64) error { return nil }
	switch {
	case src.URL != "":
		if f.offline && !isFileURL(src.URL) {
			d, err := f.recordedPin(refURL, src.URL, redact(src.URL))
			if err != nil {
				return src, err
			}
			src.SHA256 = strings.TrimPrefix(d, "sha256:")
			return src, nil
		}
		d, err := f.download(ctx, src.URL, accept)
		if err != nil {
			return src, err
		}
		f.recordPin(refURL, src.URL, d)
		src.SHA256 = strings.TrimPrefix(d, "sha256:")
		return src, nil
	case src.Chart != nil && strings.HasPrefix(src.Chart.Repository, "oci://"):
		c := *src.Chart
		var d string
		var err error
		if f.offline {
			d, err = f.recordedPin(refOCI, ociChartRef(&c), fmt.Sprintf("chart %s %s from %s", c.Name, c.Version, c.Repository))
		} else {
			d, err = f.pinOCIChart(ctx, &c)
		}
		if err != nil {
			return src, err
		}
		c.Digest = d
		src.Chart = &c
		return src, nil
	case src.Chart != nil:
		c := *src.Chart
		what := fmt.Sprintf("chart %s %s from %s", c.Name, c.Version, redact(c.Repository))
		entry, idxURL, err := f.chartEntry(ctx, c.Repository, c.Name, c.Version)
		if err != nil {
			if idxURL == "" {
				return src, err
			}
			return src, fmt.Errorf("%s: %w", what, err)
		}
		archive, err := entry.archiveURL(idxURL)
		if err != nil {
			return src, fmt.Errorf("%s: %w", what, err)
		}
		listed := ""
		if entry.Digest != "" {
			if listed, err = parseDigest(entry.Digest); err != nil {
				return src, fmt.Errorf("%s: the repository index lists the digest %q: %w", what, entry.Digest, err)
			}
		}
		if f.offline {
			if listed == "" || !f.cache.has(listed) {
				return src, &NotCachedError{What: what, Cache: f.cache.dir, Pinning: true}
			}
			c.Digest = listed
			src.Chart = &c
			return src, nil
		}
		d, err := f.download(ctx, archive, func(got string, n int64) error {
			if listed != "" && got != listed {
				return &DigestMismatchError{What: what, URL: redact(archive), Expected: listed, Got: got, Size: n,
					Note: "the archive served differs from the digest its repository index lists"}
			}
			return nil
		})
		if err != nil {
			return src, err
		}
		c.Digest = d
		src.Chart = &c
		return src, nil
	}
	if f.offline {
		return src, fmt.Errorf("pinning needs the network: %w", ErrOffline)
	}
	return src, errors.New("only url and chart sources are pinned by download; pin git sources by commit and images by digest")
}

// pinOCIChart finds the chart layer of an OCI chart, downloads it into the
// cache, records the reference and returns its digest.
func (f *Fetcher) pinOCIChart(ctx context.Context, c *recipe.ChartSource) (string, error) {
	what := fmt.Sprintf("chart %s %s from %s", c.Name, c.Version, c.Repository)
	tag, _, layer, err := f.ociChartLayer(ctx, c, what)
	if err != nil {
		return "", err
	}
	want := layer.Digest.String()
	d, err := f.registryBlob(ctx, tag.Context(), want, verifyBlob(what, tag, want))
	if err == nil {
		f.recordPin(refOCI, ociChartRef(c), d)
	}
	return d, err
}

// Kinds of recorded pins: the directories under refs/ of the cache.
const (
	refURL = "url" // a url source's URL
	refOCI = "oci" // an OCI chart's reference, REGISTRY/REPO/NAME:TAG
)

// pinRef is a recorded pin: the blob that a URL or an OCI chart reference
// last resolved to, by a verified download or a fetch that matched a
// recipe's pin. Source is redacted: no credentials are written.
type pinRef struct {
	Source string `json:"source"`
	Blob   string `json:"blob"`
}

// recordPin writes the pin reference of source (a URL or OCI chart
// reference) to blob. The cache works without it, so a failure to write
// it is logged, not returned.
func (f *Fetcher) recordPin(kind, source, blob string) {
	b, _ := json.Marshal(pinRef{Source: redact(source), Blob: blob})
	if err := f.cache.writeRef(filepath.Join(kind, keyOf(source)), b); err != nil {
		f.logf("%v; an offline pin of %s will not find it in the cache", err, redact(source))
	}
}

// recordedPin returns the blob recorded for source when it is still in the
// cache, or an error wrapping ErrOffline that names what.
func (f *Fetcher) recordedPin(kind, source, what string) (string, error) {
	var ref pinRef
	b, err := f.cache.readRef(filepath.Join(kind, keyOf(source)))
	if err == nil && json.Unmarshal(b, &ref) == nil && ref.Source == redact(source) && f.cache.has(ref.Blob) {
		return ref.Blob, nil
	}
	return "", &NotCachedError{What: what, Cache: f.cache.dir, Pinning: true, Unrecorded: true}
}
