package builder

import (
	"context"
	"fmt"
	"strings"

	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/sigbundle"
)

// signCharts attaches to each chart of res the Sigstore bundle of its
// signature by every WithChartSigners key (see WithChartSigners) and by
// the WithKeylessSigner. The
// statement names the chart's repository as its build info records it
// (registry/path/chart, no scheme or tag) and its manifest digest.
func (b *Builder) signCharts(ctx context.Context, res *Result) error {
	if len(b.chartSigners) == 0 && b.keyless == nil {
		return nil
	}
	for i, c := range res.Charts {
		digest := c.Manifest.Digest.String()
		repo := strings.TrimPrefix(res.Info.Charts[i].Ref, "oci://")
		if j := strings.LastIndex(repo, ":"); j > strings.LastIndex(repo, "/") {
			repo = repo[:j]
		}
		st, err := sigbundle.NewStatement(repo, digest, sigbundle.SignPredicate, nil)
		if err != nil {
			return fmt.Errorf("chart %s: %w", c.Key, err)
		}
		for _, s := range b.chartSigners {
			data, err := sigbundle.Sign(st, s)
			if err != nil {
				return fmt.Errorf("chart %s: %w", c.Key, err)
			}
			img, err := oci.ReferrerImage(c.Manifest, sigbundle.MediaType, sigbundle.MediaType, data, b.epoch)
			if err != nil {
				return err
			}
			if err := b.target.PushReferrer(ctx, c.Repo, img); err != nil {
				return fmt.Errorf("chart %s: attach its cosign signature: %w", c.Key, err)
			}
			b.logf("%s: signed %s@%s for cosign (key %s)", res.Name, repo, digest, s.KeyID())
		}
		if b.keyless != nil {
			data, err := b.keyless.Sign(ctx, st)
			if err != nil {
				return fmt.Errorf("chart %s: %w", c.Key, err)
			}
			img, err := oci.ReferrerImage(c.Manifest, sigbundle.MediaType, sigbundle.MediaType, data, b.epoch)
			if err != nil {
				return err
			}
			if err := b.target.PushReferrer(ctx, c.Repo, img); err != nil {
				return fmt.Errorf("chart %s: attach its keyless cosign signature: %w", c.Key, err)
			}
			b.logf("%s: signed %s@%s for cosign keylessly (%s)", res.Name, repo, digest, b.keyless.Identity().Subject)
		}
	}
	return nil
}
