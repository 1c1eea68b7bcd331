package qualify_test

import (
	"testing"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/qualify"
	"kbuild.dev/kbuild/qualify/qualifybench"
)

// BenchmarkQualify times a whole qualification (install, digests, helm
// test, uninstall, upgrade from the build before, rollback, uninstall) of
// a package of the real shapes (qualify.BenchIndex) on a fresh local
// control plane per iteration, and reports each phase's wall time and
// kbuild's own CPU time in it, and the control plane's start
// (qualifybench.Run): kbuild's share of the wall time is what the target
// (≤ 10 %) is about; the rest is the cluster's work. It runs with Go's
// default garbage collector; kbuild test collects less often (GOGC=400
// GOMEMLIMIT=896MiB set in the environment does the same here).
//
//	bash scripts/test.sh ./qualify/ -run '^$' -bench Qualify -benchtime 3x
func BenchmarkQualify(b *testing.B) {
	reg := testenv.Registry(b)
	kcp := testenv.Tool(b, "kcp")
	x := qualify.BenchIndex(b, reg)
	qualifybench.Run(b, kcp, qualify.Qualification{Index: x, Target: evidence.Target{Package: "bench", Version: "1.1.0", Build: 1},
		Timeout: time.Minute, PlainHTTP: plainhttp.Policy{Loopback: true}}, qualify.PhaseRollback)
}
