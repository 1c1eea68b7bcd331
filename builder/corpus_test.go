package builder

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/internal/testtree"
)

// corpus is the repository's testdata/corpus: recipes shaped like what
// upstream ships (helm test pods with random names, tagless and digest-only
// images, an operator with a CR naming an image and an image only it
// deploys, a CRD with anchors patched on the anchor and through the alias,
// a List with shared anchors, a CRLF file, a chart branching on
// .Capabilities). cmd/kbuild's TestCorpus checks what validate and images
// print for it.
var corpus = filepath.Join("..", "testdata", "corpus")

// TestCorpusBuild builds each corpus recipe twice, offline, at the same
// SOURCE_DATE_EPOCH: the two dist trees (records, BuildInfo sidecars and
// the OCI layout) are byte for byte the same, and the sidecar records the
// Kubernetes version and API set the charts were rendered against.
func TestCorpusBuild(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build []string // in the BuildInfo sidecar
	}{
		{name: "demo-tests", build: []string{"kubeVersion: v1.37.0"}},
		{name: "capabilities", build: []string{"kubeVersion: v1.37.0", "- policy/v1/PodDisruptionBudget"}},
		{name: "operator", build: []string{"kubeVersion: v1.37.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(corpus, tc.name)
			cache := t.TempDir()
			var outs [2]map[string]string
			for i := range outs {
				out := filepath.Join(t.TempDir(), "dist")
				buildDirs(t, cache, out, true, []string{dir}, WithEpoch(time.Unix(1700000000, 0)))
				outs[i] = testtree.Read(t, out)
			}
			if len(outs[0]) == 0 || fmt.Sprint(outs[0]) != fmt.Sprint(outs[1]) {
				t.Errorf("two builds differ:\n%v\n%v", slices.Sorted(maps.Keys(outs[0])), slices.Sorted(maps.Keys(outs[1])))
			}
			var info string
			for f, body := range outs[0] {
				if strings.HasSuffix(f, ".build.yaml") {
					info = body
				}
			}
			for _, w := range tc.build {
				if !strings.Contains(info, w) {
					t.Errorf("BuildInfo lacks %q:\n%s", w, info)
				}
			}
		})
	}
}
