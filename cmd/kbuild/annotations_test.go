package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/builder"
)

// TestChartIndexDigestAnnotation serves a chart whose repository index
// lists another digest than the archive (which matches the recipe's pin):
// validate and build succeed and say so in CI too, as a GitHub Actions
// warning on the source's line.
func TestChartIndexDigestAnnotation(t *testing.T) {
	chartDir := t.TempDir()
	writeFiles(t, chartDir, map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: app\nversion: 1.0.0\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n",
	})
	archive, err := builder.Pack(chartDir, "app", "1.0.0", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	const stale = "3333333333333333333333333333333333333333333333333333333333333333"
	srv := serveChartRepo(t, map[string]*builder.Archive{"app": archive}, func(*builder.Archive) string { return stale })
	for _, cmd := range []string{"validate", "build"} {
		t.Run(cmd, func(t *testing.T) {
			work := t.TempDir()
			src := fmt.Sprintf("    upstream:\n      chart: {repository: %q, name: app, version: 1.0.0, digest: %q}\n", srv.URL, archive.Digest)
			writeFiles(t, filepath.Join(work, "app"), map[string]string{"recipe.yaml": recipeYAML(src, "", "")})
			args := []string{cmd, "--cache-dir", filepath.Join(work, "cache"), "app"}
			if cmd == "build" {
				args = append(args, "-o", filepath.Join(work, "dist"))
			}
			r := kbuild(t, work, []string{"GITHUB_ACTIONS=true"}, args...)
			if r.code != 0 {
				t.Fatalf("%s: %s", cmd, r)
			}
			want := "::warning file=app/recipe.yaml,line=11::spec.sources.upstream: chart app 1.0.0 from " + srv.URL + ": the repository index lists sha256:" + stale + ", but the archive matches the pin " + archive.Digest
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s does not annotate the stale index digest; want\n%s\nin\n%s", cmd, want, r)
			}
		})
	}
}
