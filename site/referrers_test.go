package site

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With WithReferrers, a version shown in full whose SBOM the site does
// not hold names the oras command of each chart by manifest digest, and
// links no file; one whose files are published links them and names no
// command. Without it the registry is not mentioned.
func TestReferrers(t *testing.T) {
	idx := testIndex(t)
	pkg := idx.Packages["kubevirt"]
	pkg.Versions = nil
	manifests := map[string]string{}
	for i := range 12 {
		s := kubevirtSpec(fmt.Sprintf("1.0.%d", i), 1, chartDigest(1000+i))
		pkg.Versions = append(pkg.Versions, version(t, s))
		for _, c := range s.Variants[0].Components {
			manifests[c.Chart.Digest] = chartDigest(5000 + i)
		}
	}
	// The files of 1.0.11 only (the newest).
	published := WithPublished("sbom/kubevirt-1.0.11-1.cdx.json", "provenance/kubevirt-1.0.11-1.intoto.json")
	for _, tc := range []struct {
		name     string
		opts     []Option
		commands int
		note     bool
	}{
		{"referrers", []Option{published, WithManifestDigests(manifests), WithReferrers()}, 9 * 2, true},
		{"without", []Option{published, WithManifestDigests(manifests)}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Write(dir, idx, tc.opts...); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "packages", "kubevirt.html"))
			if err != nil {
				t.Fatal(err)
			}
			page := string(b)
			// 1.0.2 … 1.0.10 are shown in full without files: two charts each.
			if n := strings.Count(page, "<li><code>oras discover "); n != tc.commands {
				t.Errorf("page names %d oras commands, want %d", n, tc.commands)
			}
			for i := 2; i <= 10 && tc.commands > 0; i++ {
				if !strings.Contains(page, "@"+chartDigest(5000+i)+"</code>") {
					t.Errorf("page has no oras command for the chart manifest of 1.0.%d", i)
				}
			}
			if strings.Contains(page, "sbom/kubevirt-1.0.10-1.cdx.json") || !strings.Contains(page, `href="../sbom/kubevirt-1.0.11-1.cdx.json"`) {
				t.Error("page links an SBOM the site does not hold, or not the one it does")
			}
			if got := strings.Contains(page, "attached to its charts in the registry as OCI referrers"); got != tc.note {
				t.Errorf("note on the versions not shown in full: %v, want %v", got, tc.note)
			}
		})
	}
}
