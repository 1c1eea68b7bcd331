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

// realisticSpec returns the spec of a build like kubevirt's: two variants,
// three components, five images, RBAC rules, a health check.
func realisticSpec(name, version string, build int) PackageSpec {
	img := func(c string) string {
		return fmt.Sprintf("quay.io/%s/%s:v%s@sha256:%064x", name, c, version, build*7919+len(c))
	}
	chart := func(c string) *ChartRef {
		return &ChartRef{Repository: "oci://registry.example.com/charts/" + name, Name: c, Version: fmt.Sprintf("%s-%d", version, build), Digest: fmt.Sprintf("sha256:%064x", build*104729+len(c))}
	}
	return PackageSpec{
		Version:  version,
		Build:    build,
		Provides: []string{name, "api:" + name + ".io/v1"},
		CRDs:     []string{name + "s." + name + ".io", "configs." + name + ".io"},
		Rollback: &Rollback{Safe: build%2 == 0},
		Images:   []string{img("operator"), img("api"), img("controller"), img("handler"), img("webhook")},
		Permissions: &Permissions{ClusterWide: true, Rules: []PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "services", "configmaps"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{name + ".io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		}},
		Variants: []Variant{
			{Name: "default", Requires: []Requirement{{Package: "cert-manager", Version: ">=1.12 <2"}}, Components: []Component{
				{Name: "operator", Chart: chart("operator"), Install: &Install{ReleaseName: name + "-operator", Namespace: name, WaitStrategy: "watcher",
					HealthCheckExprs: []HealthCheck{{APIVersion: name + ".io/v1", Kind: "Config", Current: "has(self.status) && self.status.conditions.exists(c, c.type == 'Available' && c.status == 'True')"}},
					ReadyWhen:        []ReadyWhen{{APIVersion: name + ".io/v1", Kind: "Config", Name: name, Namespace: name, Condition: "Available", Status: "True"}}}},
				{Name: "cr", Chart: chart("cr"), Install: &Install{ReleaseName: name + "-cr", Namespace: name, DependsOn: []string{"operator"}}},
			}},
			{Name: "minimal", Components: []Component{{Name: "operator", Chart: chart("operator"), Install: &Install{ReleaseName: name + "-operator", Namespace: name}}}},
		},
	}
}
