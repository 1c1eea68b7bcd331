package index

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"kbuild.dev/kbuild/spec"
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
func record(name, version string, build int) *spec.PackageSource {
	return &spec.PackageSource{
		APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind,
		Metadata: spec.RecordMetadata{Name: name, Annotations: map[string]string{DescriptionAnnotation: "The " + name + " package", HomeAnnotation: "https://example.com/" + name}},
		Spec: spec.PackageSpec{
			Version: version, Build: build,
			Provides: []string{name},
			Rollback: &spec.Rollback{},
			Images:   []string{"registry.example.com/" + name + ":v" + version + "@" + testDigest(build)},
			Variants: []spec.Variant{{Name: "default", Components: []spec.Component{{
				Name:    "main",
				Chart:   &spec.ChartRef{Repository: "oci://registry.example.com/" + name, Name: name, Version: version + "-" + itoa(build), Digest: testDigest(100 + build)},
				Install: &spec.Install{ReleaseName: name, Namespace: name},
			}}}},
		},
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func buildIndex(t testing.TB, recs ...*spec.PackageSource) *RepositoryIndex {
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
			rec := &spec.PackageSource{APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind, Metadata: spec.RecordMetadata{Name: name, Annotations: map[string]string{DescriptionAnnotation: "Package " + name, HomeAnnotation: "https://example.com/" + name}}, Spec: realisticSpec(name, version, 1+v%3)}
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
func realisticSpec(name, version string, build int) spec.PackageSpec {
	img := func(c string) string {
		return fmt.Sprintf("quay.io/%s/%s:v%s@sha256:%064x", name, c, version, build*7919+len(c))
	}
	chart := func(c string) *spec.ChartRef {
		return &spec.ChartRef{Repository: "oci://registry.example.com/charts/" + name, Name: c, Version: fmt.Sprintf("%s-%d", version, build), Digest: fmt.Sprintf("sha256:%064x", build*104729+len(c))}
	}
	return spec.PackageSpec{
		Version:  version,
		Build:    build,
		Provides: []string{name, "api:" + name + ".io/v1"},
		CRDs:     []string{name + "s." + name + ".io", "configs." + name + ".io"},
		Rollback: &spec.Rollback{Safe: build%2 == 0},
		Images:   []string{img("operator"), img("api"), img("controller"), img("handler"), img("webhook")},
		Permissions: &spec.Permissions{ClusterWide: true, Rules: []spec.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "services", "configmaps"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{name + ".io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		}},
		Variants: []spec.Variant{
			{Name: "default", Requires: []spec.Requirement{{Package: "cert-manager", Version: ">=1.12 <2"}}, Components: []spec.Component{
				{Name: "operator", Chart: chart("operator"), Install: &spec.Install{ReleaseName: name + "-operator", Namespace: name, WaitStrategy: "watcher",
					HealthCheckExprs: []spec.HealthCheck{{APIVersion: name + ".io/v1", Kind: "Config", Current: "has(self.status) && self.status.conditions.exists(c, c.type == 'Available' && c.status == 'True')"}},
					ReadyWhen:        []spec.ReadyWhen{{APIVersion: name + ".io/v1", Kind: "Config", Name: name, Namespace: name, Condition: "Available", Status: "True"}}}},
				{Name: "cr", Chart: chart("cr"), Install: &spec.Install{ReleaseName: name + "-cr", Namespace: name, DependsOn: []string{"operator"}}},
			}},
			{Name: "minimal", Components: []spec.Component{{Name: "operator", Chart: chart("operator"), Install: &spec.Install{ReleaseName: name + "-operator", Namespace: name}}}},
		},
	}
}
