package distindex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

func record(name, version string, build int, chart string) *spec.PackageSource {
	return &spec.PackageSource{
		APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind,
		Metadata: spec.RecordMetadata{Name: name},
		Spec: spec.PackageSpec{Version: version, Build: build, Variants: []spec.Variant{{Name: "default", Components: []spec.Component{{Name: "c",
			Chart: &spec.ChartRef{Repository: "oci://r/" + name, Name: "c", Version: fmt.Sprintf("%s-%d", version, build), Digest: "sha256:" + strings.Repeat(chart, 64)}}}}}},
	}
}

func write(t *testing.T, p string, rec *spec.PackageSource) {
	t.Helper()
	b, err := index.MarshalRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBuild(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "kubevirt-1.9.0-4.yaml"), record("kubevirt", "1.9.0", 4, "a"))
	write(t, filepath.Join(dir, "nested", "cdi-1.66.1-1.yml"), record("cdi", "1.66.1", 1, "b"))
	write(t, filepath.Join(dir, "oci", "stray.yaml"), record("stray", "1.0.0", 1, "c"))
	write(t, filepath.Join(dir, ".hidden", "stray.yaml"), record("hidden", "1.0.0", 1, "c"))
	os.WriteFile(filepath.Join(dir, "kubevirt-1.9.0-4.build.yaml"), []byte("apiVersion: kbuild.dev/v1\nkind: BuildInfo\npackage: kubevirt\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.yaml"), []byte("kind: Notes\nitems: [a, b]\n"), 0o644)
	k, _ := trust.GenerateKey(nil)
	sig, _ := trust.SignVersion(record("kubevirt", "1.9.0", 4, "a"), k)
	side, _ := index.MarshalSignatureList([]index.Signature{sig})
	os.WriteFile(filepath.Join(dir, "kubevirt-1.9.0-4.sig.yaml"), side, 0o644)

	for _, opts := range [][]index.BuilderOption{nil, {index.Compact()}} {
		b := index.NewBuilder(opts...)
		if err := Add(context.Background(), b, dir); err != nil {
			t.Fatal(err)
		}
		if p, v := b.Counts(); p != 2 || v != 2 {
			t.Fatalf("%d packages, %d versions; want kubevirt and cdi only", p, v)
		}
		data, err := b.Marshal(time.Unix(1791633600, 0), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "signatures:\n      - keyid: "+k.KeyID()) {
			t.Errorf("the sidecar's signature is not in the index:\n%s", data)
		}
	}
	x, err := Build(context.Background(), dir, time.Unix(1791633600, 0))
	if err != nil || len(x.Packages) != 2 {
		t.Fatalf("Build = %v, %v", x, err)
	}

	// Every broken record is reported, with its file.
	os.WriteFile(filepath.Join(dir, "broken-1.0.0-1.yaml"), []byte("apiVersion: kubepkg.dev/v1\nkind: PackageSource\nspec:\n  version: [\n"), 0o644)
	changed := record("kubevirt", "1.9.0", 4, "d")
	write(t, filepath.Join(dir, "copy", "kubevirt-1.9.0-4.yaml"), changed)
	err = Add(context.Background(), index.NewBuilder(index.Compact()), dir)
	if err == nil || !strings.Contains(err.Error(), "build record "+filepath.Join(dir, "broken-1.0.0-1.yaml")) {
		t.Errorf("broken record: %v", err)
	}
	var dup *index.DuplicateError
	if !errors.As(err, &dup) {
		t.Errorf("a record of the same build with other content: %v", err)
	}
}
