package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/trust"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/")

// sbomDist is the dist directory the sbom package's tests use: kubevirt
// 1.9.0 build 4 and 1.8.2 build 1, cdi 1.66.1 build 1 (one image not
// pinned) and virt-stack 1.0.0 build 1 (a meta package), with BuildInfo
// sidecars for kubevirt 1.9.0 and cdi.
const sbomDist = "../../sbom/testdata/dist"

func checkCmdGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/kbuild -run '%s' -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run go test ./cmd/kbuild -run '%s' -update if intended):\ngot:\n%s", golden, t.Name(), got)
	}
}

func readBOM(t *testing.T, file string) *cdx.BOM {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var bom cdx.BOM
	if err := json.Unmarshal(data, &bom); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &bom
}

func componentRefs(bom *cdx.BOM) []string {
	var refs []string
	if bom.Components != nil {
		for _, c := range *bom.Components {
			refs = append(refs, c.BOMRef)
		}
	}
	return refs
}

func TestSBOMDist(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600")
	out := filepath.Join(t.TempDir(), "sbom.cdx.json")
	r := runInProcess("sbom", sbomDist, "-o", out)
	if r.code != 0 || r.stdout != out+"\n" {
		t.Fatalf("kbuild sbom: %s; want exit 0 and the file on stdout", r)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkCmdGolden(t, "sbom-dist.cdx.json", data)

	// The same again gives the same bytes.
	out2 := filepath.Join(t.TempDir(), "again.cdx.json")
	if r := runInProcess("sbom", sbomDist, "-o", out2); r.code != 0 {
		t.Fatal(r)
	}
	if again, _ := os.ReadFile(out2); !bytes.Equal(again, data) {
		t.Error("a second kbuild sbom of the same dist wrote different bytes")
	}
}

func TestSBOMSelect(t *testing.T) {
	const repo = "repository:" + sbomDist
	tests := []struct {
		name    string
		args    []string
		subject string // metadata.component bom-ref
		refs    []string
	}{
		{name: "one build", args: []string{"kubevirt@1.9.0"}, subject: "package:kubevirt-1.9.0-4"},
		{name: "every version", args: []string{"kubevirt"}, subject: repo,
			refs: []string{"package:kubevirt-1.8.2-1", "package:kubevirt-1.9.0-4"}},
		{name: "two packages", args: []string{"virt-stack", "cdi@v1.66.1"}, subject: repo,
			refs: []string{"package:cdi-1.66.1-1", "package:virt-stack-1.0.0-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.json")
			r := runInProcess(append([]string{"sbom", sbomDist, "-o", out}, tc.args...)...)
			if r.code != 0 {
				t.Fatal(r)
			}
			bom := readBOM(t, out)
			if got := bom.Metadata.Component.BOMRef; got != tc.subject {
				t.Errorf("metadata.component = %s, want %s", got, tc.subject)
			}
			var pkgs []string
			for _, ref := range componentRefs(bom) {
				if strings.HasPrefix(ref, "package:") {
					pkgs = append(pkgs, ref)
				}
			}
			if strings.Join(pkgs, " ") != strings.Join(tc.refs, " ") {
				t.Errorf("packages = %v, want %v", pkgs, tc.refs)
			}
		})
	}
}

func TestSBOMErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.json")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown package", []string{"sbom", sbomDist, "nosuch", "-o", out}, 1,
			`error: package "nosuch" is not in dist directory ../../sbom/testdata/dist; it has cdi, kubevirt, virt-stack`},
		{"unknown version", []string{"sbom", sbomDist, "kubevirt@2.0.0", "-o", out}, 1,
			"error: kubevirt@2.0.0 is not in dist directory ../../sbom/testdata/dist; kubevirt has 1.8.2 (build 1), 1.9.0 (build 4)"},
		{"no output", []string{"sbom", sbomDist}, 2, "-o FILE is required"},
		{"no input", []string{"sbom", "-o", out}, 2, "expected DIST, or --index REF"},
		{"missing input", []string{"sbom", "no/such/dir", "-o", out}, 1, "expected a dist directory or an index.yaml; a dist directory is what kbuild build -o DIST writes"},
		{"empty dist", []string{"sbom", t.TempDir(), "-o", out}, 1, "has no build records"},
		{"missing trivy", []string{"sbom", sbomDist, "--with-image-contents", "--trivy", "/no/such/trivy", "-o", out}, 1,
			"install it with `GOEXPERIMENT=jsonv2 go install github.com/aquasecurity/trivy/cmd/trivy@v0.74.0`"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runInProcess(tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("kbuild %v: %s\nwant exit %d and stderr containing %q", tc.args, r, tc.code, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("kbuild %v wrote %s although it failed", tc.args, out)
			}
		})
	}
}

// writeIndex writes dir/index.yaml made of the records in sbomDist,
// generated at generated, signed (index.yaml.sig), and the BuildInfo
// sidecars under dir/build/; it returns the path of the public key.
func writeIndex(t *testing.T, dir string, generated time.Time) string {
	t.Helper()
	recs, err := dist.Read(sbomDist)
	if err != nil {
		t.Fatal(err)
	}
	b := index.NewBuilder()
	for _, r := range recs {
		if err := b.Add(r.File, &r.Record, nil); err != nil {
			t.Fatal(err)
		}
		if r.Info != nil {
			data, err := dist.Marshal(r.Info)
			if err != nil {
				t.Fatal(err)
			}
			key := dist.Key(r.Record.Metadata.Name, r.Record.Spec.Version, r.Record.Spec.Build)
			if err := atomicfile.WriteFile(filepath.Join(dir, "build", key+".build.yaml"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	x, err := b.Index(generated)
	if err != nil {
		t.Fatal(err)
	}
	data, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return signIndex(t, filepath.Join(dir, "index.yaml"))
}

// signIndex signs the index at file with a new key, writes file.sig, and
// returns the path of the public key.
func signIndex(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	k, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := trust.Sign(data, k)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := index.MarshalSignatures(sigs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file+".sig", sig, 0o644); err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(t.TempDir(), "index.pub")
	if err := os.WriteFile(pub, k.Public().PEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	return pub
}

func TestSBOMIndex(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	site := t.TempDir()
	generated := time.Date(2026, 10, 10, 12, 0, 0, 0, time.UTC)
	pub := writeIndex(t, site, generated)
	srv := httptest.NewServer(http.FileServer(http.Dir(site)))
	defer srv.Close()

	fromDist := filepath.Join(t.TempDir(), "dist.json")
	if r := runInProcess("sbom", sbomDist, "-o", fromDist); r.code != 0 {
		t.Fatal(r)
	}
	for _, src := range []string{filepath.Join(site, "index.yaml"), srv.URL + "/index.yaml", site} {
		out := filepath.Join(t.TempDir(), "index.json")
		if r := runInProcess("sbom", "--index", src, "-o", out, "--public-key", pub); r.code != 0 || r.stderr != "" {
			t.Fatalf("kbuild sbom --index %s: %s", src, r)
		}
		// The old spelling, the index as the first argument, gives the
		// same BOM with a notice (a site directory is a dist there).
		if src != site {
			old := filepath.Join(t.TempDir(), "old.json")
			r := runInProcess("sbom", src, "-o", old, "--public-key", pub)
			if want := "warning: kbuild sbom: an index as the first argument is deprecated and goes away in the next release; use --index " + src + "\n"; r.code != 0 || r.stderr != want {
				t.Errorf("kbuild sbom %s: %s\nwant exit 0 and %q", src, r, want)
			}
			if a, b := readFile(t, out), readFile(t, old); a != b {
				t.Errorf("kbuild sbom %s differs from kbuild sbom --index %s", src, src)
			}
		}
		bom := readBOM(t, out)
		if got, want := bom.Metadata.Timestamp, "2026-10-10T12:00:00Z"; got != want {
			t.Errorf("%s: metadata.timestamp = %s, want the index's generated time %s", src, got, want)
		}
		if got, want := bom.Metadata.Component.Name, filepath.ToSlash(src); got != want {
			t.Errorf("%s: metadata.component.name = %s, want %s", src, got, want)
		}
		// Sidecars beside the index give the same components as the dist.
		if got, want := strings.Join(componentRefs(bom), "\n"), strings.Join(componentRefs(readBOM(t, fromDist)), "\n"); got != want {
			t.Errorf("%s: components =\n%s\nwant those of the dist:\n%s", src, got, want)
		}
		if bom.SerialNumber != readBOM(t, fromDist).SerialNumber {
			t.Errorf("%s: serial number %s differs from the dist's", src, bom.SerialNumber)
		}
	}

	// A sidecar that belongs to another build is refused.
	if err := os.Rename(filepath.Join(site, "build", "cdi-1.66.1-1.build.yaml"), filepath.Join(site, "build", "kubevirt-1.8.2-1.build.yaml")); err != nil {
		t.Fatal(err)
	}
	r := runInProcess("sbom", "--index", srv.URL+"/index.yaml", "-o", filepath.Join(t.TempDir(), "x.json"), "--public-key", pub)
	if want := "expected kind BuildInfo of kubevirt@1.8.2 build 1, got kind \"BuildInfo\" of cdi@1.66.1 build 1"; r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("kbuild sbom with a wrong sidecar: %s\nwant exit 1 and %q", r, want)
	}
	if r := runInProcess("sbom", "--index", srv.URL+"/no/index.yaml", "-o", filepath.Join(t.TempDir(), "x.json"), "--public-key", pub); r.code != 1 || !strings.Contains(r.stderr, "404 Not Found: not found") {
		t.Errorf("kbuild sbom of a missing URL: %s", r)
	}
	// An index is read only once verified: without a key, or signed by
	// another, it is refused.
	for _, cmd := range []string{"sbom", "scan"} {
		args := []string{cmd, "--index", srv.URL + "/index.yaml", "--format", "json"}
		if cmd == "sbom" {
			args[3], args[4] = "-o", filepath.Join(t.TempDir(), "x.json")
		}
		if r := runInProcess(args...); r.code != 2 || !strings.Contains(r.stderr, "needs --public-key FILE or --root-key FILE") {
			t.Errorf("kbuild %s of an index without a key: %s", cmd, r)
		}
	}
	// scan's old spelling, the index as the first argument, reads it too.
	trivy := writeScanFake(t)
	r = runInProcess("scan", srv.URL+"/index.yaml", "--public-key", pub, "--trivy", trivy, "--trivy-offline")
	if want := "warning: kbuild scan: an index as the first argument is deprecated and goes away in the next release; use --index " + srv.URL + "/index.yaml\n"; r.code != 0 || !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stdout, "scanned with") {
		t.Errorf("kbuild scan INDEX (the old spelling): %s\nwant exit 0 and stderr starting %q", r, want)
	}
	stranger := keygen(t, t.TempDir(), "stranger")
	if r := runInProcess("sbom", "--index", srv.URL+"/index.yaml", "-o", filepath.Join(t.TempDir(), "x.json"), "--public-key", stranger+".pub"); r.code != exitVerification || !strings.Contains(r.stderr, "refused: index.yaml: index is not signed by a trusted key") {
		t.Errorf("kbuild sbom of an index signed by another key: %s", r)
	}
}
