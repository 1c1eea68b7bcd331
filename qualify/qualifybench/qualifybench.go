// Package qualifybench is the loop of the qualification benchmarks
// (qualify's BenchmarkQualify and cmd/kbuild's BenchmarkQualifyForemanStack):
// per iteration a fresh local control plane (internal/controlplane, from
// kcp), one whole qualification on it, and the sums the benchmarks report
// — the control plane's start, and each phase's wall time and kbuild's own
// CPU time (qualify.Phase.CPU: getrusage of the whole process, every
// goroutine of it; the control plane runs in processes of its own, so
// none of its CPU is counted) — and kbuild's share of the qualification's
// wall time, the figure the target (≤ 10 %) is about.
package qualifybench

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"kbuild.dev/kbuild/internal/controlplane"
	"kbuild.dev/kbuild/qualify"
)

// Run runs q on a fresh control plane started from kcp for each of b's
// iterations (q's Kubeconfig set to the control plane's) and reports the
// metrics: start-s/op, NAME-s/op and NAME-cpu-s/op for every phase, and
// kbuild-cpu-% (the CPU of every phase over their wall time). An
// iteration whose qualification fails, or does not pass every phase of
// mustPass, fails the benchmark.
func Run(b *testing.B, kcp string, q qualify.Qualification, mustPass ...string) {
	b.Helper()
	sums := map[string][2]time.Duration{}
	var start, wall, cpu time.Duration
	for b.Loop() {
		dir, err := os.MkdirTemp("", "kbuild-bench-")
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		c, err := controlplane.Start(context.Background(), controlplane.Options{KCP: kcp, Dir: dir})
		if err != nil {
			os.RemoveAll(dir)
			b.Fatal(err)
		}
		start += time.Since(t0)
		run := q
		run.Kubeconfig = c.Kubeconfig
		res, err := run.Run(context.Background())
		c.Stop()
		os.RemoveAll(dir)
		if err != nil || !res.Pass() {
			b.Fatalf("qualification of %s: %v: failed %v, passed %v", q.Target, err, failed(res), passed(res))
		}
		for _, p := range mustPass {
			if !slices.Contains(res.Passed(), p) {
				b.Fatalf("qualification of %s: phase %s did not pass: failed %v, passed %v", q.Target, p, res.Failed(), res.Passed())
			}
		}
		for _, p := range res.Phases {
			s := sums[p.Name]
			sums[p.Name] = [2]time.Duration{s[0] + p.Took, s[1] + p.CPU}
			wall += p.Took
			cpu += p.CPU
		}
	}
	n := float64(b.N)
	b.ReportMetric(start.Seconds()/n, "start-s/op")
	for name, s := range sums {
		b.ReportMetric(s[0].Seconds()/n, name+"-s/op")
		b.ReportMetric(s[1].Seconds()/n, name+"-cpu-s/op")
	}
	if wall > 0 {
		b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "kbuild-cpu-%")
	}
}

func failed(r *qualify.Result) []string {
	if r == nil {
		return nil
	}
	return r.Failed()
}

func passed(r *qualify.Result) []string {
	if r == nil {
		return nil
	}
	return r.Passed()
}
