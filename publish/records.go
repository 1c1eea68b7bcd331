package publish

import (
	"context"
	"fmt"
	"strings"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/chartpin"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/sources"
	"kbuild.dev/kbuild/spec"
)

// SourcePinner returns a chart pinner (see WithChartPinner) that pins a
// chart a build record names without a digest by downloading it with
// fetch, as kubepkg repo index does: trust on first use, the record file
// is not changed, the index carries the digest. logf, when not nil, is
// told of every chart pinned.
func SourcePinner(fetch *sources.Fetcher, logf func(format string, args ...any)) dist.Pinner {
	return func(ctx context.Context, c *spec.ChartRef) error {
		src, err := fetch.Pin(ctx, recipe.Source{Chart: &recipe.ChartSource{Repository: c.Repository, Name: c.Name, Version: c.Version}})
		if err != nil {
			return err
		}
		c.Digest = src.Chart.Digest
		if logf != nil {
			logf("pinned chart %s/%s %s at %s (it had no digest; the index now pins what was downloaded)", strings.TrimSuffix(c.Repository, "/"), c.Name, c.Version, c.Digest)
		}
		return nil
	}
}

// CheckRecordCharts pulls every chart the build records under dir pin and
// checks its archive digest (kubepkg repo index --verify); it returns how
// many charts it checked and those that do not match their pins.
func CheckRecordCharts(ctx context.Context, dir string, o chartpin.Options) (int, []*chartpin.Mismatch, error) {
	b := index.NewBuilder()
	if err := dist.Add(ctx, b, dir); err != nil {
		return 0, nil, err
	}
	// The index is only walked for its charts: its time is not used.
	x, err := b.Index(time.Unix(1, 0))
	if err != nil {
		return 0, nil, fmt.Errorf("build records in %s: %w", dir, err)
	}
	n, bad := chartpin.Check(ctx, x, o)
	return n, bad, nil
}
