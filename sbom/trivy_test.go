package sbom

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTrivy is a shell script standing in for the trivy program where the
// test is about how kbuild runs it and reads its output; the real Trivy is
// tested in e2e_test.go. It logs "<TRIVY_INSECURE> <args>" per run and
// behaves as $FAKE_TRIVY_MODE says.
const fakeTrivy = `#!/bin/sh
echo "insecure=$TRIVY_INSECURE $*" >> "$FAKE_TRIVY_LOG"
if [ "$1" = version ]; then
  echo '{"Version":"0.74.0","VulnerabilityDB":{"Version":2,"NextUpdate":"2027-11-01T06:00:00Z","UpdatedAt":"2026-11-01T06:00:00.123456Z","DownloadedAt":"0001-01-01T00:00:00Z"}}'
  exit 0
fi
case "$FAKE_TRIVY_MODE" in
crash)
  i=1
  while [ $i -le 300 ]; do echo "2026-11-30T00:00:00Z	INFO	progress line $i" >&2; i=$((i+1)); done
  echo "2026-11-30T00:00:00Z	FATAL	Fatal error	run error: image scan error: unable to inspect the image" >&2
  exit 1;;
garbage)
  echo "this is not json"
  echo "2026-11-30T00:00:00Z	WARN	something odd" >&2;;
ok)
  cat "$FAKE_TRIVY_REPORT";;
esac
`

func setupFakeTrivy(t *testing.T, mode, report string) (path, log string) {
	t.Helper()
	dir := t.TempDir()
	path = filepath.Join(dir, "trivy")
	if err := os.WriteFile(path, []byte(fakeTrivy), 0o755); err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(dir, "log")
	t.Setenv("FAKE_TRIVY_LOG", log)
	t.Setenv("FAKE_TRIVY_MODE", mode)
	t.Setenv("FAKE_TRIVY_REPORT", report)
	t.Setenv("TRIVY_INSECURE", "")
	return path, log
}

func readLog(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

const loopImage = "127.0.0.1:5000/kbuild-test/vulnerable:1.0@sha256:42341b1d52699f4bb87f3996151bafe2e3fe065e9146cc64a15959ddf7bf2c69"

func TestTrivyNotFound(t *testing.T) {
	_, err := NewTrivy(WithTrivyPath(filepath.Join(t.TempDir(), "no-trivy")))
	if !errors.Is(err, ErrTrivyNotFound) {
		t.Fatalf("NewTrivy(missing) error = %v, want ErrTrivyNotFound", err)
	}
	if !strings.Contains(err.Error(), "GOEXPERIMENT=jsonv2 go install github.com/aquasecurity/trivy/cmd/trivy@v0.74.0") {
		t.Errorf("NewTrivy(missing) error = %v, want it to say how to install trivy", err)
	}
}

func TestTrivyFailures(t *testing.T) {
	tests := []struct {
		mode    string
		want    []string
		notWant string
	}{
		{mode: "crash", want: []string{
			"trivy on image " + loopImage + ": exit status 1",
			"--skip-db-update --skip-java-db-update --offline-scan --skip-version-check --disable-telemetry",
			"trivy's stderr ends with:",
			"FATAL\tFatal error\trun error: image scan error: unable to inspect the image",
			"progress line 300",
		}, notWant: "progress line 1\n"},
		{mode: "garbage", want: []string{
			"trivy on image " + loopImage + ": printed no JSON report: report is not a JSON object (stdout starts with \"this is not json\")",
			"WARN\tsomething odd",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			path, _ := setupFakeTrivy(t, tc.mode, "")
			tr, err := NewTrivy(WithTrivyPath(path), WithTrivyOffline(true))
			if err != nil {
				t.Fatal(err)
			}
			_, err = tr.ScanImage(context.Background(), loopImage)
			var te *TrivyError
			if !errors.As(err, &te) || te.Image != loopImage {
				t.Fatalf("ScanImage() error = %#v, want a *TrivyError for %s", err, loopImage)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ScanImage() error =\n%v\nwant it to contain %q", err, w)
				}
			}
			if tc.notWant != "" && strings.Contains(err.Error(), tc.notWant) {
				t.Errorf("ScanImage() error keeps all of stderr, want its tail only")
			}
		})
	}
}

func TestTrivyArgs(t *testing.T) {
	report := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(report, []byte(`{"Results":[{"Target":"t","Vulnerabilities":[{"VulnerabilityID":"CVE-1","PkgName":"p","InstalledVersion":"1","Severity":"HIGH"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	const remoteImage = "quay.io/kubevirt/virt-api:v1.9.0@sha256:42341b1d52699f4bb87f3996151bafe2e3fe065e9146cc64a15959ddf7bf2c69"
	ctx := context.Background()

	t.Run("offline", func(t *testing.T) {
		path, log := setupFakeTrivy(t, "ok", report)
		tr, err := NewTrivy(WithTrivyPath(path), WithTrivyOffline(true), WithTrivyCacheDir("/cache"))
		if err != nil {
			t.Fatal(err)
		}
		vs, err := tr.ScanImage(ctx, loopImage)
		if err != nil || len(vs) != 1 || vs[0].ID != "CVE-1" {
			t.Fatalf("ScanImage() = %v, %v", vs, err)
		}
		if _, err := tr.ScanImage(ctx, remoteImage); err != nil {
			t.Fatal(err)
		}
		info, err := tr.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := (ScannerInfo{Name: "trivy", Version: "0.74.0", DBUpdatedAt: "2026-11-01T06:00:00Z"}); info != want {
			t.Errorf("Info() = %+v, want %+v", info, want)
		}
		want := []string{
			"insecure=true image --format json --scanners vuln --quiet --image-src remote --cache-backend memory --skip-db-update --skip-java-db-update --offline-scan --skip-version-check --disable-telemetry --cache-dir /cache " + loopImage,
			"insecure= image --format json --scanners vuln --quiet --image-src remote --cache-backend memory --skip-db-update --skip-java-db-update --offline-scan --skip-version-check --disable-telemetry --cache-dir /cache " + remoteImage,
			"insecure= version --format json --cache-dir /cache",
		}
		if got := readLog(t, log); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("trivy ran as\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("online downloads the DB once", func(t *testing.T) {
		path, log := setupFakeTrivy(t, "ok", report)
		tr, err := NewTrivy(WithTrivyPath(path))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := tr.ScanImage(ctx, remoteImage); err != nil {
				t.Fatal(err)
			}
		}
		want := []string{
			"insecure= image --download-db-only --quiet --skip-version-check --disable-telemetry",
			"insecure= image --format json --scanners vuln --quiet --image-src remote --cache-backend memory --skip-db-update " + remoteImage,
			"insecure= image --format json --scanners vuln --quiet --image-src remote --cache-backend memory --skip-db-update " + remoteImage,
		}
		if got := readLog(t, log); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("trivy ran as\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("image BOM", func(t *testing.T) {
		abs, err := filepath.Abs("testdata/trivy-image.cdx.json")
		if err != nil {
			t.Fatal(err)
		}
		path, log := setupFakeTrivy(t, "ok", abs)
		tr, err := NewTrivy(WithTrivyPath(path), WithTrivyCacheDir("/cache"))
		if err != nil {
			t.Fatal(err)
		}
		bom, err := tr.ImageBOM(ctx, loopImage)
		if err != nil {
			t.Fatal(err)
		}
		if bom.Components == nil || len(*bom.Components) != 5 {
			t.Errorf("ImageBOM() has %v components, want the 5 of the report", bom.Components)
		}
		want := "insecure=true image --format cyclonedx --quiet --image-src remote --cache-backend memory --skip-db-update --skip-java-db-update --offline-scan --skip-version-check --disable-telemetry --cache-dir /cache " + loopImage
		if got := readLog(t, log); len(got) != 1 || got[0] != want {
			t.Errorf("trivy ran as\n%s\nwant\n%s", strings.Join(got, "\n"), want)
		}
	})
}

func TestLoopbackImage(t *testing.T) {
	tests := map[string]bool{
		"127.0.0.1:5000/a:1":   true,
		"localhost:5000/a:1":   true,
		"[::1]:5000/a:1":       true,
		"quay.io/a:1":          false,
		"10.0.0.1:5000/a:1":    false,
		"registry.local/a/b:1": false,
	}
	for ref, want := range tests {
		if got := loopbackImage(ref); got != want {
			t.Errorf("loopbackImage(%q) = %v, want %v", ref, got, want)
		}
	}
}
