package site

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// pageOf returns the bytes of the page of a package with n versions of
// KubeVirt's shape (two charts whose manifest digests are known, so that
// every install snippet is shown, five images), each with its SBOM and
// provenance published.
func pageOf(t *testing.T, n int) int {
	t.Helper()
	idx := testIndex(t)
	pkg := idx.Packages["kubevirt"]
	pkg.Versions = nil
	manifests := map[string]string{}
	var published []string
	for i := range n {
		v := fmt.Sprintf("1.%d.%d", i/10, i%10)
		s := kubevirtSpec(v, 1, chartDigest(1000+i))
		pkg.Versions = append(pkg.Versions, version(t, s))
		for _, c := range s.Variants[0].Components {
			manifests[c.Chart.Digest] = chartDigest(5000 + i)
		}
		published = append(published, "sbom/kubevirt-"+v+"-1.cdx.json", "provenance/kubevirt-"+v+"-1.intoto.json")
	}
	dir := t.TempDir()
	if err := Write(dir, idx, WithPublished(published...), WithManifestDigests(manifests)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "packages", "kubevirt.html"))
	if err != nil {
		t.Fatal(err)
	}
	return int(fi.Size())
}

// A package page stays small however many versions the package has: the
// newest MaxDetailed in full, every other one a row of the versions
// table. Bytes, not time (issue 11: the whole site within 2.5 ×
// index.yaml).
func TestPackagePageSize(t *testing.T) {
	p100, p200 := pageOf(t, 100), pageOf(t, 200)
	t.Logf("package page: %d bytes with 100 versions, %d with 200", p100, p200)
	if p100 > 110_000 {
		t.Errorf("page of a package with 100 versions is %d bytes, want at most 110,000", p100)
	}
	if per := (p200 - p100) / 100; per > 300 {
		t.Errorf("each version beyond the newest %d adds %d bytes to its package's page, want at most 300 (a table row)", MaxDetailed, per)
	}
}
