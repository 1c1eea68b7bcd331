package qualify

import (
	"context"
	"os"
	"testing"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/internal/controlplane"
	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/spec"
)

// BenchmarkQualify times a whole qualification (install, digests, helm
// test, uninstall, upgrade from the build before, rollback, uninstall) of
// a package of the real shapes on a fresh local control plane, and
// reports each phase's wall time and kbuild's own CPU time in it, and the
// control plane's start: kbuild's share of the wall time is what the
// target (≤ 10 %) is about; the rest is the cluster's work.
//
//	bash scripts/test.sh ./qualify/ -run '^$' -bench Qualify -benchtime 3x
func BenchmarkQualify(b *testing.B) {
	reg := testenv.Registry(b)
	kcp := testenv.Tool(b, "kcp")
	install := spec.Install{UpgradeCRDs: "CreateReplace"}
	x := fixtureIndexB(b, reg,
		version{pkg: "bench", version: "1.0.0", build: 1, namespace: "bench", install: install, crds: []string{"widgets.example.com"},
			app: &app{name: "bench", version: "1.0.0-1", image: imageV1, crdVersions: []string{"v1"}, storageVersion: "v1", widgetVersion: "v1"}},
		version{pkg: "bench", version: "1.1.0", build: 1, namespace: "bench", install: install, crds: []string{"widgets.example.com"}, rollbackSafe: true,
			app: &app{name: "bench", version: "1.1.0-1", image: imageV2, crdVersions: []string{"v1"}, storageVersion: "v1", widgetVersion: "v1"}},
	)
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
			b.Fatal(err)
		}
		start += time.Since(t0)
		q := &Qualification{Index: x, Target: evidence.Target{Package: "bench", Version: "1.1.0", Build: 1},
			Kubeconfig: c.Kubeconfig, Timeout: time.Minute, PlainHTTP: plainhttp.Policy{Loopback: true}}
		res, err := q.Run(context.Background())
		c.Stop()
		os.RemoveAll(dir)
		if err != nil || !res.Pass() {
			b.Fatalf("%v %v", err, res.Failed())
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
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "kbuild-cpu-%")
}
