package qualify

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/controlplane"
	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/spec"
)

// The cluster tests share one control plane (a start costs seconds);
// each test installs into namespaces of its own.
var (
	clusterOnce sync.Once
	shared      *controlplane.Cluster
	clusterErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.Stop()
		os.RemoveAll(shared.Dir)
	}
	os.Exit(code)
}

func testCluster(t *testing.T) *controlplane.Cluster {
	t.Helper()
	testenv.Tool(t, "kcp") // fails under the test command, skips elsewhere
	clusterOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kbuild-cluster-")
		if err != nil {
			clusterErr = err
			return
		}
		shared, clusterErr = controlplane.Start(context.Background(), controlplane.Options{
			KCP: testenv.Tool(t, "kcp"), Dir: dir,
		})
	})
	if clusterErr != nil {
		t.Fatal(clusterErr)
	}
	return shared
}

func qualification(t *testing.T, c *controlplane.Cluster, x *index.RepositoryIndex, target string, build int, timeout time.Duration) (*Result, string, error) {
	t.Helper()
	pkg, ver, _ := strings.Cut(target, "@")
	var log bytes.Buffer
	q := &Qualification{
		Index: x, Target: evidence.Target{Package: pkg, Version: ver, Build: build},
		Kubeconfig: c.Kubeconfig, Timeout: timeout, PlainHTTP: plainhttp.Policy{Loopback: true}, Log: &log,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := q.Run(ctx)
	if testing.Verbose() || t.Failed() {
		t.Logf("log:\n%s", log.String())
	}
	return res, log.String(), err
}

// TestQualifyPasses: a package of the real shapes (Deployment, Service,
// migration hook, helm test, an operator's CRD and custom resource with
// healthCheckExprs and readyWhen) installs, passes its digests and helm
// tests, upgrades from the build before, rolls back (rollback.safe) and
// uninstalls leaving its CRD.
func TestQualifyPasses(t *testing.T) {
	c := testCluster(t)
	reg := testenv.Registry(t)
	install := spec.Install{
		UpgradeCRDs: "CreateReplace",
		HealthCheckExprs: []spec.HealthCheck{{APIVersion: "example.com/v1", Kind: "Widget",
			Current: "status.phase == 'Ready'", Failed: "status.phase == 'Failed'"}},
		ReadyWhen: []spec.ReadyWhen{{APIVersion: "example.com/v1", Kind: "Widget", Name: "shop-widget", Condition: "Ready"}},
	}
	x := fixtureIndex(t, reg,
		version{pkg: "shop", version: "1.0.0", build: 1, namespace: "shop", install: install, crds: []string{"widgets.example.com"},
			app: &app{name: "shop", version: "1.0.0-1", image: imageV1, crdVersions: []string{"v1"}, storageVersion: "v1", widgetVersion: "v1"}},
		version{pkg: "shop", version: "1.1.0", build: 1, namespace: "shop", install: install, crds: []string{"widgets.example.com"}, rollbackSafe: true,
			app: &app{name: "shop", version: "1.1.0-1", image: imageV2, crdVersions: []string{"v1", "v2"}, storageVersion: "v1", widgetVersion: "v1"}},
	)
	res, log, err := qualification(t, c, x, "shop@1.1.0", 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Pass() {
		t.Fatalf("failed phases %v:\n%s", res.Failed(), log)
	}
	want := []string{PhaseDigests, PhaseHelmTest, PhaseInstall, PhaseResolve, PhaseRollback, PhaseUninstall, PhaseUpgrade}
	if got := res.Passed(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("passed %v, want %v", got, want)
	}
	if res.Env["kubernetes"] != "1.37" || res.Env["arch"] != "amd64" || res.Env["runtime"] != "kwok-v0.8.0" {
		t.Errorf("environment %v: want kubernetes=1.37, arch=amd64, runtime=kwok-v0.8.0 read from the cluster", res.Env)
	}
	if res.From == nil || res.From.Target.Version != "1.0.0" {
		t.Errorf("upgraded from %v, want shop 1.0.0 build 1", res.From)
	}
	if len(res.Pods) != 2 {
		t.Errorf("pods %+v, want the Deployment's 2", res.Pods)
	}
	for _, p := range res.Pods {
		if len(p.Images) != 1 || p.Images[0] != imageV2 || p.Node != "kwok-node-0" {
			t.Errorf("pod %+v: want %s on kwok-node-0", p, imageV2)
		}
	}
	for _, phrase := range []string{"1 helm test hook(s) passed", "apply CRD widgets.example.com (upgradeCRDs: CreateReplace)", "rollback release shop"} {
		if !strings.Contains(log, phrase) {
			t.Errorf("log lacks %q", phrase)
		}
	}
	var junit, summary bytes.Buffer
	if err := res.WriteJUnit(&junit, res.Plan.Target); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(junit.String(), `failures="0"`) || !strings.Contains(junit.String(), `name="upgrade from shop 1.0.0 build 1"`) {
		t.Errorf("JUnit:\n%s", junit.String())
	}
	if err := res.WriteMarkdown(&summary, res.Plan.Target); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(summary.String(), "kbuild test shop 1.1.0 build 1: pass") {
		t.Errorf("summary:\n%s", summary.String())
	}
}

// TestQualifyFails: each way a build can fail is a fail result, for the
// right reason, never a crash.
func TestQualifyFails(t *testing.T) {
	c := testCluster(t)
	reg := testenv.Registry(t)
	web := func(name, ver string, a app) *app {
		a.name, a.version = name, ver
		if a.image == "" {
			a.image = imageV1
		}
		return &a
	}
	x := fixtureIndex(t, reg,
		// an upgrade that changes a Deployment's selector
		version{pkg: "immutable", version: "1.0.0", build: 1, namespace: "immutable", app: web("immutable", "1.0.0-1", app{})},
		version{pkg: "immutable", version: "2.0.0", build: 1, namespace: "immutable", app: web("immutable", "2.0.0-1", app{selector: "immutable-v2"})},
		// a CRD version removed while objects of it are stored
		version{pkg: "crdgone", version: "1.0.0", build: 1, namespace: "crdgone", install: spec.Install{UpgradeCRDs: "CreateReplace"}, crds: []string{"widgets.example.com"},
			app: web("crdgone", "1.0.0-1", app{crdVersions: []string{"v1"}, storageVersion: "v1", widgetVersion: "v1"})},
		version{pkg: "crdgone", version: "2.0.0", build: 1, namespace: "crdgone", install: spec.Install{UpgradeCRDs: "CreateReplace"}, crds: []string{"widgets.example.com"},
			app: web("crdgone", "2.0.0-1", app{crdVersions: []string{"v2"}, storageVersion: "v2", widgetVersion: "v2"})},
		// a failing migration Job
		version{pkg: "badmigration", version: "1.0.0", build: 1, namespace: "badmigration", app: web("badmigration", "1.0.0-1", app{migrationExit: 3})},
		// readiness never reached
		version{pkg: "neverready", version: "1.0.0", build: 1, namespace: "neverready", app: web("neverready", "1.0.0-1", app{neverReady: true})},
		// a pod whose image is not pinned by digest
		version{pkg: "unpinned", version: "1.0.0", build: 1, namespace: "unpinned", app: web("unpinned", "1.0.0-1", app{image: "registry.example/acme/web:1.0"})},
		// an uninstall that leaves an object behind
		version{pkg: "leaves", version: "1.0.0", build: 1, namespace: "leaves", app: web("leaves", "1.0.0-1", app{leaveHook: true})},
		// a requires nobody provides
		version{pkg: "needsdb", version: "1.0.0", build: 1, namespace: "needsdb", requires: []spec.Requirement{{Capability: "db:postgres"}},
			app: web("needsdb", "1.0.0-1", app{})},
	)
	for _, tc := range []struct {
		target string
		phase  string
		want   []string
	}{
		{"immutable@2.0.0", PhaseUpgrade, []string{"helm upgrade", "field is immutable"}},
		{"crdgone@2.0.0", PhaseUpgrade, []string{"apply CRD widgets.example.com", "storedVersions"}},
		{"badmigration@1.0.0", PhaseInstall, []string{"helm install", "badmigration-migrate"}},
		{"neverready@1.0.0", PhaseInstall, []string{"Deployment neverready/neverready not ready within 15s", "kstatus", "last observed: InProgress"}},
		{"unpinned@1.0.0", PhaseDigests, []string{"runs registry.example/acme/web:1.0, which is not pinned by digest"}},
		{"leaves@1.0.0", PhaseUninstall, []string{"uninstall left 1 object(s) behind", "ConfigMap leaves/leaves-seed"}},
		{"needsdb@1.0.0", PhaseResolve, []string{`requires the capability "db:postgres" and no package of the index provides it`}},
	} {
		t.Run(tc.target, func(t *testing.T) {
			t.Parallel()
			res, _, err := qualification(t, c, x, tc.target, 1, 15*time.Second)
			if err != nil {
				t.Fatalf("want a fail result, got an error: %v", err)
			}
			if res.Pass() {
				t.Fatalf("passed; want %s to fail", tc.phase)
			}
			var msg string
			for _, p := range res.Phases {
				if p.Name == tc.phase && p.Err != nil {
					msg = p.Err.Error()
				}
			}
			if msg == "" {
				t.Fatalf("phase %s did not fail; failed: %v", tc.phase, res.Failed())
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s failed with %q, want it to say %q", tc.phase, msg, w)
				}
			}
			if res.Verdict() != evidence.Fail {
				t.Errorf("verdict %s", res.Verdict())
			}
		})
	}
}

// TestQualifyAPIServerKilled: the API server dying mid-test is an error,
// not a result: nothing was shown either way, so no evidence is due.
func TestQualifyAPIServerKilled(t *testing.T) {
	// its own cluster: this test kills it
	c := controlplane.ForTest(t)
	reg := testenv.Registry(t)
	x := fixtureIndex(t, reg, version{pkg: "victim", version: "1.0.0", build: 1, namespace: "victim", app: &app{name: "victim", version: "1.0.0-1", image: imageV1, neverReady: true}})
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(4 * time.Second) // the release is installed and waited for
		if err := c.Kill("kube-apiserver"); err != nil {
			t.Error(err)
		}
	}()
	res, _, err := qualification(t, c, x, "victim@1.0.0", 1, time.Minute)
	<-done
	if !errors.Is(err, ErrCluster) {
		t.Fatalf("err %v (result %+v), want ErrCluster", err, res)
	}
}
