package index

import (
	"fmt"
	"testing"
	"time"
)

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

func BenchmarkMarshalIndex(b *testing.B) {
	x := realisticIndex(100, 100)
	out, _ := x.Marshal()
	b.SetBytes(int64(len(out)))
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := x.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, c0)
}

func BenchmarkParseIndex(b *testing.B) {
	x := realisticIndex(100, 100)
	out, _ := x.Marshal()
	b.SetBytes(int64(len(out)))
	b.Logf("%d versions, %d bytes, %d bytes per version", 10000, len(out), len(out)/10000)
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := ParseIndex(out); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, c0)
}

func BenchmarkSpecDigest(b *testing.B) {
	s := realisticSpec("kubevirt", "1.9.0", 4)
	j, _ := s.CanonicalJSON()
	b.SetBytes(int64(len(j)))
	for i := 0; i < b.N; i++ {
		s.Digest()
	}
}

func BenchmarkSpecJSONStdlib(b *testing.B) {
	s := realisticSpec("kubevirt", "1.9.0", 4)
	for i := 0; i < b.N; i++ {
		s.CanonicalJSON()
	}
}

// BenchmarkParseKubepkgIndex reads an index in the forms kubepkg writes,
// with fields kbuild does not know (5,000 packages, 15,000 versions, 8 MB).
func BenchmarkParseKubepkgIndex(b *testing.B) {
	data := kubepkgIndexOf(b, 5000, nil)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := ParseIndex(data); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, c0)
}

// reportCPU reports the CPU time per operation since c0 (cpu-ns/op), which
// varies less than ns/op when other work shares the machine.
func reportCPU(b *testing.B, c0 time.Duration) {
	if c := cpuTime(); c > 0 {
		b.ReportMetric(float64(c-c0)/float64(b.N), "cpu-ns/op")
	}
}
