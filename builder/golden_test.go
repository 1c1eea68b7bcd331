package builder

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/sources"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenDigests is the archive digest of every chart of every recipe
// shape, built offline at a fixed SOURCE_DATE_EPOCH.
const goldenDigests = "testdata/archive-digests.golden"

// TestGoldenArchiveDigests builds one recipe of every shape kbuild packs
// — manifests wrapped into a chart (a URL with patches and an excluded
// kind, a dir of manifests with patches), a chart kept as a dir source
// with values, an overlay and removed files, a chart with crds/, an
// operator chart, a chart branching on .Capabilities, helm test pods with
// generated names — and compares every chart archive digest with the
// golden file. A published version must rebuild to the same bytes with
// the next kbuild: when this test fails after a change to kbuild, charts
// published before it no longer rebuild (rebuild-check says DIFFER), and
// every recipe of those shapes needs a new build number. Say so in the
// release notes (CONTRIBUTING.md, "Releasing kbuild") before running it
// with -update.
func TestGoldenArchiveDigests(t *testing.T) {
	root := testenv.RepoRoot()
	upstream := testenv.Upstream(t, "kubevirt-operator-v1.9.0.yaml")
	cache := t.TempDir()
	fetch, err := sources.New(sources.WithCacheDir(cache))
	if err != nil {
		t.Fatal(err)
	}
	// The real upstream release manifest the kubevirt recipe wraps.
	if _, err := fetch.Add(context.Background(), filepath.Join(upstream, "kubevirt-operator-v1.9.0.yaml")); err != nil {
		t.Fatal(err)
	}
	dirs := []string{
		"recipes/kubevirt",                                  // URL manifests + patches + exclude; a dir of CRs
		"examples/virt-template",                            // dir of manifests + patches
		"examples/smart-proxy",                              // chart dir + values + overlay + remove
		"cmd/kbuild/testdata/kubepkg/recipes/demo-operator", // chart with crds/
		"cmd/kbuild/testdata/kubepkg/recipes/local-path",    // kubepkg's wrapped manifests
		"testdata/corpus/operator",                          // operator chart deploying images
		"testdata/corpus/capabilities",                      // chart branching on .Capabilities
		"testdata/corpus/demo-tests",                        // helm test pods with random names
	}
	var lines []string
	for _, d := range dirs {
		out := t.TempDir()
		for _, r := range buildDirs(t, cache, out, true, []string{filepath.Join(root, d)}, WithEpoch(time.Unix(1700000000, 0))) {
			for _, c := range r.Info.Charts {
				lines = append(lines, fmt.Sprintf("%s %s %s", d, c.Name, c.Digest))
			}
		}
	}
	slices.Sort(lines)
	got := strings.Join(lines, "\n") + "\n"
	if *update {
		if err := os.WriteFile(goldenDigests, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenDigests)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("chart archive digests changed: published versions of these shapes no longer rebuild to their bytes.\ngot:\n%s\nwant (%s):\n%s", got, goldenDigests, want)
	}
}
