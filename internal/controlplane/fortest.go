package controlplane

import (
	"context"
	"os"
	"testing"

	"kbuild.dev/kbuild/internal/testenv"
)

// ForTest starts a cluster for a test (kcp from the tool cache, which
// scripts/test.sh fills) and stops it when the test ends;
// its logs are kept in the test's temporary directory and printed when
// the test fails. Under the test command (KBUILD_E2E=1) a missing binary
// fails the test; elsewhere it skips.
func ForTest(t testing.TB, nodes ...Node) *Cluster {
	t.Helper()
	kcp := testenv.Tool(t, "kcp")
	dir, err := os.MkdirTemp("", "kbuild-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Start(context.Background(), Options{KCP: kcp, Dir: dir, Nodes: nodes})
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() {
			for _, name := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
				b, _ := os.ReadFile(c.LogFile(name))
				if len(b) > 3000 {
					b = b[len(b)-3000:]
				}
				t.Logf("the end of %s's log:\n%s", name, b)
			}
		}
		if os.Getenv("KBUILD_KEEP_CLUSTER") != "" {
			t.Logf("cluster files kept in %s (KBUILD_KEEP_CLUSTER)", dir)
			return
		}
		os.RemoveAll(dir)
	})
	for _, s := range c.Started {
		t.Logf("control plane: %s took %s", s.Name, s.Took.Round(1e6))
	}
	return c
}
