package sbom

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"

	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/sbom/trivytest"
	"kbuild.dev/kbuild/spec"
)

// realTrivy pushes the vulnerable test image to the real registry (twice,
// under two repositories), writes the small Trivy DB and returns an offline
// runner of the real trivy on it with the two image references.
func realTrivy(t *testing.T) (*Trivy, []string) {
	t.Helper()
	path := testenv.Tool(t, "trivy")
	reg := testenv.Registry(t)
	cache := t.TempDir()
	trivytest.WriteDB(t, cache)
	refs := []string{trivytest.PushImage(t, reg, "sbom-e2e-a"), trivytest.PushImage(t, reg, "sbom-e2e-b")}
	tr, err := NewTrivy(WithTrivyPath(path), WithTrivyOffline(true), WithTrivyCacheDir(cache))
	if err != nil {
		t.Fatal(err)
	}
	return tr, refs
}

func TestRealTrivyScan(t *testing.T) {
	tr, refs := realTrivy(t)
	ctx := context.Background()

	vulns, err := tr.ScanImage(ctx, refs[0])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vulns {
		got = append(got, strings.Join([]string{v.ID, v.Severity, v.Package, v.InstalledVersion, v.FixedVersion}, " "))
	}
	want := []string{
		"CVE-2026-90001 CRITICAL libcrypto3 3.5.1-r0 3.5.4-r0",
		"CVE-2026-90002 CRITICAL libcrypto3 3.5.1-r0 3.5.4-r0",
		"CVE-2026-90003 HIGH busybox 1.37.0-r18 1.37.0-r20",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("trivy found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Offline without a DB: trivy refuses, kbuild says what to do.
	empty, err := NewTrivy(WithTrivyPath(tr.Path()), WithTrivyOffline(true), WithTrivyCacheDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = empty.ScanImage(ctx, refs[0])
	for _, want := range []string{"trivy on image " + refs[0], "no vulnerability DB in the cache directory", "--skip-db-update cannot be specified on the first run"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ScanImage() without a DB: error = %v, want it to contain %q", err, want)
		}
	}

	// Both images at once, sharing the DB; the report names the DB.
	builds := []Build{
		{Name: "vulnerable", Spec: spec.PackageSpec{Version: "1.0.0", Build: 1, Images: refs}},
		{Name: "other", Spec: spec.PackageSpec{Version: "2.0.0", Build: 3, Images: refs[1:]}},
	}
	r, err := Scan(ctx, builds, tr, WithJobs(2))
	if err != nil {
		t.Fatal(err)
	}
	// A trivy built with go install calls itself "dev".
	if got := r.Scanner; got.Name != "trivy" || got.Version == "" || got.DBUpdatedAt != "2026-11-01T06:00:00Z" {
		t.Errorf("Scanner = %+v, want trivy, its version and DB updated at 2026-11-01T06:00:00Z", got)
	}
	var lines []string
	for _, v := range r.Violations(SeverityCritical) {
		lines = append(lines, v.String())
	}
	wantLines := []string{
		"other@2.0.0 runs " + refs[1] + " with 2 CRITICAL vulnerabilities",
		"vulnerable@1.0.0 runs " + refs[0] + " with 2 CRITICAL vulnerabilities",
		"vulnerable@1.0.0 runs " + refs[1] + " with 2 CRITICAL vulnerabilities",
	}
	if strings.Join(lines, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("Violations(CRITICAL) =\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
	}
}

func TestRealTrivyImageContents(t *testing.T) {
	tr, refs := realTrivy(t)
	ctx := context.Background()
	b := Build{Name: "vulnerable", Spec: spec.PackageSpec{Version: "1.0.0", Build: 1, Images: refs}}

	gen := func() []byte {
		bom, err := ForBuild(ctx, b, WithImageContents(tr), WithTimestamp(epoch))
		if err != nil {
			t.Fatal(err)
		}
		data, err := Marshal(bom)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	first := gen()
	validateBOM(t, first)
	if second := gen(); !bytes.Equal(first, second) {
		t.Errorf("two BOMs of the same image differ (Trivy's random parts leak):\n%s", firstDiff(second, first))
	}
	serial := []byte("urn:uuid:" + serialUUID(mustDigest(t, b)))
	if uuidRE.Match(bytes.ReplaceAll(first, serial, nil)) {
		t.Errorf("BOM keeps a random UUID from Trivy's output")
	}

	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(first), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatal(err)
	}
	var nested []string
	for _, c := range *bom.Components {
		if c.Type != cdx.ComponentTypeContainer || c.Components == nil {
			continue
		}
		for _, n := range *c.Components {
			nested = append(nested, string(n.Type)+" "+n.Name+" "+n.Version)
		}
	}
	for _, want := range []string{
		"operating-system alpine 3.22.2",
		"library busybox 1.37.0-r18",
		"library libcrypto3 3.5.1-r0",
		"library musl 1.2.5-r10",
	} {
		n := 0
		for _, got := range nested {
			if got == want {
				n++
			}
		}
		if n != len(refs) {
			t.Errorf("%q is nested under %d images, want %d; nested: %v", want, n, len(refs), nested)
		}
	}
	var tools []string
	for _, c := range *bom.Metadata.Tools.Components {
		tools = append(tools, c.Group+"/"+c.Name)
	}
	if !strings.Contains(strings.Join(tools, ","), "aquasecurity/trivy") {
		t.Errorf("metadata.tools = %v, want trivy listed", tools)
	}
}

func mustDigest(t *testing.T, b Build) string {
	t.Helper()
	d, err := b.Spec.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Trivy reads kbuild's compact BOMs with short bom-refs: the one of a
// version as a site holds it, and one with its images' contents nested.
// (Trivy 0.6x reports no packages of contents nested under a container
// component, with the purl bom-refs of before as well: it accepts the
// BOM and finds nothing to scan in it; kbuild scan scans the images
// themselves.)
func TestRealTrivyReadsBOM(t *testing.T) {
	tr, refs := realTrivy(t)
	ctx := context.Background()
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	trivytest.WriteDB(t, cache)
	all := loadBuilds(t, "testdata/dist")
	for _, tc := range []struct {
		name string
		b    Build
		opts []Option
	}{
		{"version", find(t, all, "kubevirt-1.9.0-4"), []Option{WithTool("kbuild", "v0.1.0")}},
		{"contents", Build{Name: "vulnerable", Spec: spec.PackageSpec{Version: "1.0.0", Build: 1, Images: refs}}, []Option{WithImageContents(tr)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bom, err := ForBuild(ctx, tc.b, append(tc.opts, WithTimestamp(epoch))...)
			if err != nil {
				t.Fatal(err)
			}
			data, err := Marshal(bom)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, tc.name+".cdx.json")
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(tr.Path(), "sbom", "--cache-dir", cache, "--skip-db-update", "--offline-scan", "--quiet", "--format", "json", file)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("trivy sbom %s: %v\n%s", file, err, stderr.Bytes())
			}
			var report struct{ ArtifactName, ArtifactType string }
			if err := json.Unmarshal(out, &report); err != nil {
				t.Fatalf("trivy sbom %s: report is not JSON: %v\n%s", file, err, out)
			}
			if report.ArtifactType != "cyclonedx" || report.ArtifactName != file {
				t.Errorf("trivy read %s as %q named %q, want cyclonedx named %s:\n%s", file, report.ArtifactType, report.ArtifactName, file, out)
			}
		})
	}
}
