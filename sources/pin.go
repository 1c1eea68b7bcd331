package sources

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"kbuild.dev/kbuild/builder/recipe"
)

// Pin downloads an unpinned url or chart source into the cache and returns
// it with its pin filled in: sha256 for a url, the archive digest for a
// chart. This is trust on first use: `kbuild init` writes the pin into a
// draft recipe for the maintainer to review, and every later build verifies
// against it. A chart whose repository index lists a digest must match it.
//
// Offline, only a chart from an HTTP(S) repository can be pinned: from the
// cached index.yaml, when the archive it lists is in the cache too (an
// earlier pin downloaded both).
func (f *Fetcher) Pin(ctx context.Context, src recipe.Source) (recipe.Source, error) {
	if f.offline && (src.Chart == nil || strings.HasPrefix(src.Chart.Repository, "oci://")) {
		return src, fmt.Errorf("pinning needs the network: %w", ErrOffline)
	}
	accept := func(string, int64) error { return nil }
	switch {
	case src.URL != "":
		d, err := f.download(ctx, src.URL, accept)
		if err != nil {
			return src, err
		}
		src.SHA256 = strings.TrimPrefix(d, "sha256:")
		return src, nil
	case src.Chart != nil && strings.HasPrefix(src.Chart.Repository, "oci://"):
		c := *src.Chart
		d, err := f.pinOCIChart(ctx, &c)
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
				return src, fmt.Errorf("%w: %s is not in the cache %s; pin it once without --offline", ErrOffline, what, f.cache.dir)
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
	return src, errors.New("only url and chart sources are pinned by download; pin git sources by commit and images by digest")
}

// pinOCIChart finds the chart layer of an OCI chart, downloads it into the
// cache and returns its digest.
func (f *Fetcher) pinOCIChart(ctx context.Context, c *recipe.ChartSource) (string, error) {
	what := fmt.Sprintf("chart %s %s from %s", c.Name, c.Version, c.Repository)
	tag, _, layer, err := f.ociChartLayer(ctx, c, what)
	if err != nil {
		return "", err
	}
	want := layer.Digest.String()
	return f.registryBlob(ctx, tag.Context(), want, verifyBlob(what, tag, want))
}
