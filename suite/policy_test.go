package suite

import (
	"strings"
	"testing"

	"kbuild.dev/kbuild/evidence"
)

func TestEvaluate(t *testing.T) {
	target := evidence.Target{Package: "foreman", Version: "3.15.0", Build: 1}
	ev := func(result, k8s, arch string, passed ...string) *evidence.Verified {
		return &evidence.Verified{Target: target, Result: result, Env: map[string]string{"kubernetes": k8s, "arch": arch, "runtime": "containerd"},
			Statement: &evidence.Statement{Predicate: evidence.TestResult{Result: result, PassedTests: passed}}}
	}
	p := &Policy{KubernetesMinors: 2, Architectures: []string{"amd64", "arm64"}, Tests: []string{"install", "upgrade", "rollback"}, Role: "qa"}
	all := []string{"install", "rollback", "upgrade"}
	for _, tc := range []struct {
		name string
		ev   []*evidence.Verified
		want string
	}{
		{"met", []*evidence.Verified{ev(evidence.Pass, "1.33", "amd64", all...), ev(evidence.Pass, "1.34", "arm64", all...)}, ""},
		{"no evidence", nil, "passes on 0 Kubernetes minor version(s) (none), needs 2; no pass on amd64; no pass on arm64"},
		{"one minor", []*evidence.Verified{ev(evidence.Pass, "1.33", "amd64", all...), ev(evidence.Pass, "1.33", "arm64", all...)}, "passes on 1 Kubernetes minor version(s) (1.33), needs 2"},
		{"upgrade not tested", []*evidence.Verified{ev(evidence.Pass, "1.33", "amd64", all...), ev(evidence.Pass, "1.34", "arm64", "install")},
			"no pass on arm64; the pass on arch=arm64,kubernetes=1.34,runtime=containerd lists no upgrade, rollback test"},
		{"a failure", []*evidence.Verified{ev(evidence.Pass, "1.33", "amd64", all...), ev(evidence.Pass, "1.34", "arm64", all...), ev(evidence.Fail, "1.35", "amd64")},
			"foreman 3.15.0 build 1 failed its tests on arch=amd64,kubernetes=1.35,runtime=containerd"},
		{"a failure elsewhere does not count", []*evidence.Verified{ev(evidence.Pass, "1.33", "amd64", all...), ev(evidence.Pass, "1.34", "arm64", all...), ev(evidence.Fail, "1.35", "s390x")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := p.Evaluate(target, tc.ev)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Evaluate = %v, want %q", err, tc.want)
			}
		})
	}
}
