package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/sbom/trivytest"
	"kbuild.dev/kbuild/spec"
)

// scanFakeTrivy stands in for trivy in the tests of how kbuild scan reports
// and fails; e2e_scan_test.go runs the real one. virt-api has 2 CRITICAL
// and 1 HIGH vulnerabilities, virt-handler fails when FAKE_TRIVY_CRASH is
// set, every other image is clean.
const scanFakeTrivy = `#!/bin/sh
if [ "$1" = version ]; then
  echo '{"Version":"0.74.0","VulnerabilityDB":{"Version":2,"UpdatedAt":"2026-11-01T06:00:00Z"}}'
  exit 0
fi
for a; do last=$a; done
case "$last" in
*virt-api*)
  echo '{"SchemaVersion":2,"Results":[{"Target":"virt-api (alpine 3.22.2)","Vulnerabilities":[
    {"VulnerabilityID":"CVE-2026-1","PkgName":"libcrypto3","InstalledVersion":"3.5.1-r0","FixedVersion":"3.5.4-r0","Severity":"CRITICAL"},
    {"VulnerabilityID":"CVE-2026-2","PkgName":"libcrypto3","InstalledVersion":"3.5.1-r0","FixedVersion":"3.5.4-r0","Severity":"CRITICAL"},
    {"VulnerabilityID":"CVE-2026-3","PkgName":"busybox","InstalledVersion":"1.37.0-r18","Severity":"HIGH"}]}]}';;
*virt-handler*)
  if [ -n "$FAKE_TRIVY_CRASH" ]; then
    echo "2026-11-30T00:00:00Z	FATAL	Fatal error	run error: image scan error: unable to find the specified image" >&2
    exit 1
  fi
  echo '{"SchemaVersion":2}';;
*)
  echo '{"SchemaVersion":2,"Results":[]}';;
esac
`

func writeScanFake(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "trivy")
	if err := os.WriteFile(p, []byte(scanFakeTrivy), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_TRIVY_CRASH", "")
	return p
}

const virtAPIImage = "quay.io/kubevirt/virt-api:v1.9.0@sha256:42341b1d52699f4bb87f3996151bafe2e3fe065e9146cc64a15959ddf7bf2c69"

func TestScanTable(t *testing.T) {
	trivy := writeScanFake(t)
	r := runInProcess("scan", sbomDist, "--trivy", trivy, "--trivy-offline", "-j", "2")
	if r.code != 0 {
		t.Fatal(r)
	}
	checkCmdGolden(t, "scan-table.txt", []byte(r.stdout))
	if want := "warning: cdi@1.66.1 runs quay.io/kubevirt/cdi-importer:v1.66.1, not pinned by digest: not scanned"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr = %q, want the unpinned image named: %q", r.stderr, want)
	}
}

func TestScanFailOn(t *testing.T) {
	trivy := writeScanFake(t)
	tests := []struct {
		failOn string
		code   int
		lines  []string
	}{
		{"CRITICAL", 1, []string{"kubevirt@1.9.0 runs " + virtAPIImage + " with 2 CRITICAL vulnerabilities"}},
		{"high", 1, []string{
			"kubevirt@1.9.0 runs " + virtAPIImage + " with 2 CRITICAL vulnerabilities",
			"kubevirt@1.9.0 runs " + virtAPIImage + " with 1 HIGH vulnerability",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.failOn, func(t *testing.T) {
			r := runInProcess("scan", sbomDist, "--trivy", trivy, "--trivy-offline", "--fail-on", tc.failOn)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d: %s", r.code, tc.code, r)
			}
			for _, l := range tc.lines {
				if !strings.Contains(r.stderr, l+"\n") {
					t.Errorf("stderr =\n%s\nwant the line %q", r.stderr, l)
				}
			}
			if !strings.Contains(r.stdout, "PACKAGE") {
				t.Errorf("the report was not printed before failing: %s", r)
			}
		})
	}
	// Only kubevirt@1.8.2's clean image: nothing crosses the line.
	if r := runInProcess("scan", sbomDist, "kubevirt@1.8.2", "--trivy", trivy, "--trivy-offline", "--fail-on", "LOW"); r.code != 0 {
		t.Errorf("scan of a clean package with --fail-on LOW: %s", r)
	}
}

func TestScanJSON(t *testing.T) {
	trivy := writeScanFake(t)
	out := filepath.Join(t.TempDir(), "scan.json")
	r := runInProcess("scan", sbomDist, "kubevirt", "cdi", "--trivy", trivy, "--trivy-offline", "--format", "json", "-o", out)
	if r.code != 0 || r.stdout != out+"\n" || strings.Contains(r.stderr, "deprecated") {
		t.Fatalf("%s; want exit 0, the file on stdout and no notice", r)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkCmdGolden(t, "scan-report.json", data)
}

// TestScanOldSpellings runs scan as scripts written for the last release
// do: -o json meant the format, --output-file the file, --offline Trivy's.
// They give the same report, with one notice each naming the new flag.
func TestScanOldSpellings(t *testing.T) {
	trivy := writeScanFake(t)
	want, err := os.ReadFile(filepath.Join("testdata", "scan-report.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		args    []string
		out     string
		notices []string
	}{
		{"format and file", []string{"-o", "json", "--output-file", filepath.Join(dir, "a.json"), "--offline"}, filepath.Join(dir, "a.json"),
			[]string{"-o json as a format is deprecated and goes away in the next release; use --format json", "--output-file is deprecated and goes away in the next release; use --output", "--offline is deprecated and goes away in the next release; use --trivy-offline"}},
		{"file before format", []string{"--output-file", filepath.Join(dir, "b.json"), "-o", "json", "--trivy-offline"}, filepath.Join(dir, "b.json"),
			[]string{"-o json as a format is deprecated", "--output-file is deprecated"}},
		{"new -o with an old format", []string{"-o", filepath.Join(dir, "c.json"), "--output", "json", "--trivy-offline"}, filepath.Join(dir, "c.json"),
			[]string{"-o json as a format is deprecated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runInProcess(append([]string{"scan", sbomDist, "kubevirt", "cdi", "--trivy", trivy}, tc.args...)...)
			if r.code != 0 || r.stdout != tc.out+"\n" {
				t.Fatalf("%s; want exit 0 and %s on stdout", r, tc.out)
			}
			for _, n := range tc.notices {
				if !strings.Contains(r.stderr, "warning: kbuild scan: "+n) {
					t.Errorf("stderr lacks %q:\n%s", n, r.stderr)
				}
			}
			if got := strings.Count(r.stderr, "deprecated"); got != len(tc.notices) {
				t.Errorf("stderr has %d notices, want %d:\n%s", got, len(tc.notices), r.stderr)
			}
			got, err := os.ReadFile(tc.out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from testdata/scan-report.json:\n%s", tc.out, got)
			}
		})
	}
}

func TestScanErrors(t *testing.T) {
	trivy := writeScanFake(t)
	tests := []struct {
		name  string
		args  []string
		crash bool
		code  int
		want  []string
	}{
		{name: "bad severity", args: []string{"scan", sbomDist, "--fail-on", "SEVERE"}, code: 2,
			want: []string{"--fail-on SEVERE: expected CRITICAL, HIGH, MEDIUM or LOW"}},
		{name: "bad format", args: []string{"scan", sbomDist, "--format", "xml"}, code: 2, want: []string{`--format "xml": use table or json`}},
		{name: "unknown package", args: []string{"scan", sbomDist, "nosuch", "--trivy", trivy}, code: 1,
			want: []string{`package "nosuch" is not in dist directory ../../sbom/testdata/dist; it has cdi, kubevirt, virt-stack`}},
		{name: "missing trivy", args: []string{"scan", sbomDist, "--trivy", "/no/such/trivy"}, code: 1,
			want: []string{"trivy not found", "GOEXPERIMENT=jsonv2 go install github.com/aquasecurity/trivy/cmd/trivy@v0.74.0", "about 12 minutes on 2 cores"}},
		{name: "trivy crashes", args: []string{"scan", sbomDist, "--trivy", trivy, "--offline"}, crash: true, code: 1,
			want: []string{
				"trivy on image quay.io/kubevirt/virt-handler:v1.9.0@sha256:df9f2069924a28ba76f47e7f4fbd9a0be3aa13cfa004a59e7a708bbff2a90424: exit status 1",
				"FATAL\tFatal error\trun error: image scan error: unable to find the specified image",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.crash {
				t.Setenv("FAKE_TRIVY_CRASH", "1")
			}
			r := runInProcess(tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d: %s", r.code, tc.code, r)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr =\n%s\nwant it to contain %q", r.stderr, w)
				}
			}
		})
	}
}

// realTrivyDist pushes the vulnerable test image to the real registry,
// writes the small Trivy DB and a dist directory with one build that runs
// the image; it returns the trivy program, its cache directory, the dist
// directory and the image reference.
func realTrivyDist(t *testing.T) (trivy, cache, distDir, ref string) {
	t.Helper()
	trivy = testenv.Tool(t, "trivy")
	reg := testenv.Registry(t)
	cache = t.TempDir()
	trivytest.WriteDB(t, cache)
	ref = trivytest.PushImage(t, reg, "cmd-scan-e2e")
	distDir = t.TempDir()
	rec := spec.PackageSource{
		APIVersion: spec.RecordAPIVersion,
		Kind:       spec.RecordKind,
		Metadata:   spec.RecordMetadata{Name: "vulnerable"},
		Spec:       spec.PackageSpec{Version: "1.0.0", Build: 1, Images: []string{ref}},
	}
	data, err := dist.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dist.RecordPath(distDir, "vulnerable", "1.0.0", 1), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return trivy, cache, distDir, ref
}

func TestScanRealTrivy(t *testing.T) {
	trivy, cache, distDir, ref := realTrivyDist(t)
	r := runInProcess("scan", distDir, "--trivy", trivy, "--trivy-offline", "--trivy-cache-dir", cache, "--fail-on", "CRITICAL")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1: %s", r.code, r)
	}
	if want := "vulnerable@1.0.0 runs " + ref + " with 2 CRITICAL vulnerabilities\n"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr =\n%s\nwant %q", r.stderr, want)
	}
	if want := regexp.MustCompile(`(?m)^vulnerable@1\.0\.0 +` + regexp.QuoteMeta(ref) + ` +2 +1 +0 +0 +0$`); !want.MatchString(r.stdout) {
		t.Errorf("table =\n%s\nwant a row with 2 CRITICAL and 1 HIGH", r.stdout)
	}
	if want := regexp.MustCompile(`(?m)^scanned with trivy \S+, vulnerability DB updated 2026-11-01T06:00:00Z$`); !want.MatchString(r.stdout) {
		t.Errorf("stdout =\n%s\nwant %s", r.stdout, want)
	}
	// Without --fail-on findings do not fail the scan; --format json lists
	// each. The old spellings (--offline, --cache-dir) still reach Trivy.
	if r := runInProcess("scan", distDir, "--trivy", trivy, "--trivy-offline", "--trivy-cache-dir", cache, "--format", "json"); r.code != 0 || !strings.Contains(r.stdout, `"id": "CVE-2026-90003"`) {
		t.Errorf("scan --format json: %s", r)
	}
	if r := runInProcess("scan", distDir, "--trivy", trivy, "--offline", "--cache-dir", cache, "-o", "json"); r.code != 0 || !strings.Contains(r.stdout, `"id": "CVE-2026-90003"`) || !strings.Contains(r.stderr, "use --trivy-cache-dir") {
		t.Errorf("scan with the old spellings: %s", r)
	}
}

func TestSBOMRealTrivy(t *testing.T) {
	trivy, cache, distDir, _ := realTrivyDist(t)
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600")
	out := filepath.Join(t.TempDir(), "sbom.cdx.json")
	r := runInProcess("sbom", distDir, "--with-image-contents", "--trivy", trivy, "--cache-dir", cache, "-o", out)
	if r.code != 0 {
		t.Fatal(r)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer // however the BOM is laid out
	if err := json.Compact(&compact, data); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name":"libcrypto3"`, `"version":"3.5.1-r0"`, `"purl":"pkg:apk/alpine/busybox@1.37.0-r18?arch=x86_64&distro=3.22.2"`} {
		if !strings.Contains(compact.String(), want) {
			t.Errorf("BOM lacks %s", want)
		}
	}
}
