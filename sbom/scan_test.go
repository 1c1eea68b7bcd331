package sbom

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"kbuild.dev/kbuild/spec"
)

// fakeScanner answers ScanImage from a table and counts how many scans run
// at once.
type fakeScanner struct {
	vulns map[string][]Vulnerability
	errs  map[string]error

	mu        sync.Mutex
	calls     []string
	running   int
	maxAtOnce int
}

func (f *fakeScanner) ScanImage(ctx context.Context, ref string) ([]Vulnerability, error) {
	f.mu.Lock()
	f.calls = append(f.calls, ref)
	f.running++
	if f.running > f.maxAtOnce {
		f.maxAtOnce = f.running
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	if err := f.errs[ref]; err != nil {
		return nil, err
	}
	return append([]Vulnerability(nil), f.vulns[ref]...), nil
}

func (f *fakeScanner) Info(ctx context.Context) (ScannerInfo, error) {
	return ScannerInfo{Name: "trivy", Version: "0.74.0", DBUpdatedAt: "2026-11-01T06:00:00Z"}, nil
}

const (
	virtAPI     = "quay.io/kubevirt/virt-api:v1.9.0@sha256:42341b1d52699f4bb87f3996151bafe2e3fe065e9146cc64a15959ddf7bf2c69"
	virtHandler = "quay.io/kubevirt/virt-handler:v1.9.0@sha256:df9f2069924a28ba76f47e7f4fbd9a0be3aa13cfa004a59e7a708bbff2a90424"
	cdiOperator = "quay.io/kubevirt/cdi-operator:v1.66.1@sha256:8888888888888888888888888888888888888888888888888888888888888888"
)

func scanFixture(t *testing.T) ([]Build, *fakeScanner) {
	all := loadBuilds(t, "testdata/dist")
	all = append(all, Build{Name: "imageless", Spec: spec.PackageSpec{Version: "0.1.0", Build: 1, Variants: []spec.Variant{{
		Name:       "default",
		Components: []spec.Component{{Name: "c", Chart: &spec.ChartRef{Repository: "oci://r/imageless", Name: "c", Version: "0.1.0-1", Digest: "sha256:" + strings.Repeat("1", 64)}}},
	}}}})
	f := &fakeScanner{vulns: map[string][]Vulnerability{
		virtAPI: {
			{ID: "CVE-2026-1", Severity: "HIGH", Package: "openssl", InstalledVersion: "3.0.0", FixedVersion: "3.0.1", Target: "virt-api (alpine 3.22.2)"},
			{ID: "CVE-2026-2", Severity: "CRITICAL", Package: "openssl", InstalledVersion: "3.0.0", Target: "virt-api (alpine 3.22.2)"},
			{ID: "CVE-2026-3", Severity: "CRITICAL", Package: "zlib", InstalledVersion: "1.3", FixedVersion: "1.3.1", Target: "virt-api (alpine 3.22.2)"},
			{ID: "GHSA-xxxx", Severity: "UNKNOWN", Package: "golang.org/x/net", InstalledVersion: "v0.1.0", Target: "usr/bin/virt-api"},
		},
		virtHandler: {{ID: "CVE-2026-4", Severity: "LOW", Package: "busybox", InstalledVersion: "1.36", Target: "virt-handler"}},
		cdiOperator: {{ID: "CVE-2026-5", Severity: "MEDIUM", Package: "musl", InstalledVersion: "1.2", FixedVersion: "1.2.1"}},
	}}
	return all, f
}

func TestScanReport(t *testing.T) {
	builds, f := scanFixture(t)
	r, err := Scan(context.Background(), builds, f, WithJobs(2))
	if err != nil {
		t.Fatal(err)
	}
	// 5 images of kubevirt 1.9.0, 1 of 1.8.2, 1 of cdi; each once.
	if len(f.calls) != 7 {
		t.Errorf("ScanImage called %d times (%v), want 7", len(f.calls), f.calls)
	}
	if f.maxAtOnce > 2 {
		t.Errorf("%d scans ran at once, want at most 2 (WithJobs(2))", f.maxAtOnce)
	}

	var table, js bytes.Buffer
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "scan-table.txt", table.Bytes())
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	db := cmp.Or(r.Scanner.DBUpdatedAt, "unknown")
	if want := table.String() + "\nscanned with " + r.Scanner.Name + " " + r.Scanner.Version + ", vulnerability DB updated " + db + "\n"; text.String() != want {
		t.Errorf("WriteText =\n%s\nwant\n%s", text.String(), want)
	}
	checkGolden(t, "scan-report.json", js.Bytes())

	wantUnscanned := []string{
		"cdi@1.66.1 runs quay.io/kubevirt/cdi-importer:v1.66.1, not pinned by digest: not scanned; pin it as registry/repo:tag@sha256:<digest>",
		"imageless@0.1.0 installs charts but declares no images: nothing scanned; list them in package.images",
	}
	if got := strings.Join(r.Unscanned(), "\n"); got != strings.Join(wantUnscanned, "\n") {
		t.Errorf("Unscanned() =\n%s\nwant\n%s", got, strings.Join(wantUnscanned, "\n"))
	}

	tests := []struct {
		threshold Severity
		want      []string
	}{
		{SeverityCritical, []string{
			"kubevirt@1.9.0 runs " + virtAPI + " with 2 CRITICAL vulnerabilities",
		}},
		{SeverityHigh, []string{
			"kubevirt@1.9.0 runs " + virtAPI + " with 2 CRITICAL vulnerabilities",
			"kubevirt@1.9.0 runs " + virtAPI + " with 1 HIGH vulnerability",
		}},
		{SeverityMedium, []string{
			"cdi@1.66.1 runs " + cdiOperator + " with 1 MEDIUM vulnerability",
			"kubevirt@1.9.0 runs " + virtAPI + " with 2 CRITICAL vulnerabilities",
			"kubevirt@1.9.0 runs " + virtAPI + " with 1 HIGH vulnerability",
		}},
		{SeverityLow, []string{
			"cdi@1.66.1 runs " + cdiOperator + " with 1 MEDIUM vulnerability",
			"kubevirt@1.9.0 runs " + virtAPI + " with 2 CRITICAL vulnerabilities",
			"kubevirt@1.9.0 runs " + virtAPI + " with 1 HIGH vulnerability",
			"kubevirt@1.9.0 runs " + virtHandler + " with 1 LOW vulnerability",
		}},
	}
	for _, tc := range tests {
		var got []string
		for _, v := range r.Violations(tc.threshold) {
			got = append(got, v.String())
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("Violations(%s) =\n%s\nwant\n%s", tc.threshold, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./sbom -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run go test ./sbom -update if the change is intended):\n%s", golden, firstDiff(got, want))
	}
}

func TestScanStopsOnError(t *testing.T) {
	builds, f := scanFixture(t)
	boom := errors.New("exit status 1")
	f.errs = map[string]error{virtHandler: boom}
	_, err := Scan(context.Background(), builds, f, WithJobs(1))
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "scanning "+virtHandler) {
		t.Errorf("Scan() error = %v, want it to wrap %v and name %s", err, boom, virtHandler)
	}
	if _, err := Scan(context.Background(), builds, f, WithJobs(0)); err == nil {
		t.Error("Scan(WithJobs(0)) = nil error, want one")
	}
}

func TestParseTrivyReport(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // ID SEVERITY package installed
		err  string
	}{
		{name: "no Results", in: `{"SchemaVersion":2,"ArtifactName":"x","ArtifactType":"container_image"}`},
		{name: "empty Results", in: `{"Results":[]}`},
		{name: "null Results", in: `{"Results":null}`},
		{name: "results without vulnerabilities", in: `{"Results":[{"Target":"x (alpine 3.22.2)","Class":"os-pkgs","Type":"alpine"}]}`},
		{name: "findings", in: `{"Results":[
			{"Target":"a","Vulnerabilities":[
				{"VulnerabilityID":"CVE-1","PkgName":"p","InstalledVersion":"1","FixedVersion":"2","Severity":"LOW","Extra":{"x":1}},
				{"VulnerabilityID":"CVE-2","PkgName":"q","InstalledVersion":"1","Severity":"CRITICAL"},
				{"VulnerabilityID":"CVE-2","PkgName":"q","InstalledVersion":"1","Severity":"CRITICAL"},
				{"VulnerabilityID":"CVE-3","PkgName":"r","InstalledVersion":"1","Severity":"SOMETHING-NEW"},
				{"PkgName":"no-id"}
			]},
			{"Target":"b","Vulnerabilities":[{"VulnerabilityID":"CVE-2","PkgName":"q","InstalledVersion":"1","Severity":"critical"}]}
		]}`, want: []string{"CVE-2 CRITICAL q 1 a", "CVE-2 CRITICAL q 1 b", "CVE-1 LOW p 1 a", "CVE-3 UNKNOWN r 1 a"}},
		{name: "empty output", in: "", err: "not a JSON object"},
		{name: "log line", in: "2026-11-30T17:00:00Z\tFATAL\tFatal error", err: "not a JSON object"},
		{name: "truncated", in: `{"Results":[{"Target":"a","Vulnerabilities":[`, err: "decoding report"},
		{name: "wrong type", in: `{"Results":{"Target":"a"}}`, err: "decoding report"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vs, err := ParseTrivyReport([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseTrivyReport() error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range vs {
				got = append(got, strings.Join([]string{v.ID, v.Severity, v.Package, v.InstalledVersion, v.Target}, " "))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("ParseTrivyReport() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestParseSeverity(t *testing.T) {
	for _, s := range []string{"CRITICAL", "high", "Medium", "LOW", "unknown"} {
		sev, err := ParseSeverity(s)
		if err != nil || !strings.EqualFold(sev.String(), s) {
			t.Errorf("ParseSeverity(%q) = %v, %v", s, sev, err)
		}
	}
	if _, err := ParseSeverity("SEVERE"); err == nil || !strings.Contains(err.Error(), "expected CRITICAL, HIGH, MEDIUM, LOW or UNKNOWN") {
		t.Errorf("ParseSeverity(SEVERE) error = %v", err)
	}
}
