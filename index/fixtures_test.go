package index

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"testing"
	"time"
)

var testTime = time.Date(2026, 10, 10, 12, 0, 0, 0, time.UTC)

func testDigest(n int) string {
	sum := sha256.Sum256([]byte{byte(n)})
	return "sha256:" + hex.EncodeToString(sum[:])
}

// record returns a build record of name, version and build with one
// variant and one component.
func record(name, version string, build int) *PackageSource {
	return &PackageSource{
		APIVersion: RecordAPIVersion, Kind: RecordKind,
		Metadata: RecordMetadata{Name: name, Annotations: map[string]string{DescriptionAnnotation: "The " + name + " package", HomeAnnotation: "https://example.com/" + name}},
		Spec: PackageSpec{
			Version: version, Build: build,
			Provides: []string{name},
			Rollback: &Rollback{},
			Images:   []string{"registry.example.com/" + name + ":v" + version + "@" + testDigest(build)},
			Variants: []Variant{{Name: "default", Components: []Component{{
				Name:    "main",
				Chart:   &ChartRef{Repository: "oci://registry.example.com/" + name, Name: name, Version: version + "-" + itoa(build), Digest: testDigest(100 + build)},
				Install: &Install{ReleaseName: name, Namespace: name},
			}}}},
		},
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func buildIndex(t testing.TB, recs ...*PackageSource) *RepositoryIndex {
	t.Helper()
	b := NewBuilder()
	for i, r := range recs {
		if err := b.Add("record-"+itoa(i), r, nil); err != nil {
			t.Fatal(err)
		}
	}
	x, err := b.Index(testTime)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func realisticIndex(packages, versions int) *RepositoryIndex {
	b := NewBuilder()
	for p := 0; p < packages; p++ {
		name := fmt.Sprintf("package-%04d", p)
		for v := 0; v < versions; v++ {
			version := fmt.Sprintf("%d.%d.%d", v/20, v%20, p%3)
			rec := &PackageSource{APIVersion: RecordAPIVersion, Kind: RecordKind, Metadata: RecordMetadata{Name: name, Annotations: map[string]string{DescriptionAnnotation: "Package " + name, HomeAnnotation: "https://example.com/" + name}}, Spec: realisticSpec(name, version, 1+v%3)}
			if err := b.Add(name, rec, nil); err != nil {
				panic(err)
			}
		}
	}
	x, err := b.Index(time.Unix(1791633600, 0))
	if err != nil {
		panic(err)
	}
	return x
}
