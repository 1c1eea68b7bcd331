package index

import (
	"testing"
	"time"
)

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
