package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/controlplane"
	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/qualify"
	"kbuild.dev/kbuild/qualify/qualifybench"
	"kbuild.dev/kbuild/siteread"
)

// qaSite is a site the tests publish recipes into twice (so there is a
// build to upgrade from), with a root whose qa role signs kbuild test's
// evidence, and the control plane the tests qualify on.
type qaSite struct {
	t                      testing.TB
	work, site, suites     string
	rootKey, idx, qa, root string
	publish                []string
	cluster                *controlplane.Cluster
}

func newQASite(t testing.TB, work, reg string) *qaSite {
	keys := filepath.Join(work, "keys")
	s := &qaSite{t: t, work: work, site: filepath.Join(work, "site"), suites: filepath.Join(work, "suites.yaml")}
	s.rootKey, s.idx, s.qa = keygen(t, keys, "root"), keygen(t, keys, "index"), keygen(t, keys, "qa")
	s.root = filepath.Join(keys, "root.yaml")
	if r := runInProcess("trust", "root", "new", "--root-key", s.rootKey+".pub", "--index-key", s.idx+".pub", "--qa-key", s.qa+".pub", "-o", s.root); r.code != 0 {
		t.Fatal(r)
	}
	if r := runInProcess("trust", "root", "sign", s.root, "--sign-key", s.rootKey+".key"); r.code != 0 {
		t.Fatal(r)
	}
	// testing needs a pass on one Kubernetes minor, amd64, by qa; the
	// phases too, so that promote checks what kbuild test passed
	suites := "apiVersion: kbuild.dev/v1\nkind: Suites\nrootSuite: unstable\nsuites:\n  - name: unstable\n  - name: testing\n    policy:\n" +
		"      kubernetesMinors: 1\n      architectures: [amd64]\n      tests: [install, upgrade]\n      role: qa\n"
	if err := os.WriteFile(s.suites, []byte(suites), 0o644); err != nil {
		t.Fatal(err)
	}
	s.publish = []string{"publish", "recipes", "--registry", uniqueRepo(t, reg), "--plain-http", "--site", s.site, "-o", filepath.Join(work, "dist"),
		"--cache-dir", filepath.Join(work, "cache"), "--sign-key", s.idx + ".key", "--root", s.root, "--suites", s.suites}
	return s
}

func (s *qaSite) publishAll(what string) {
	s.t.Helper()
	if r := kbuild(s.t, s.work, nil, s.publish...); r.code != 0 {
		s.t.Fatalf("publish %s: %s", what, r)
	}
}

// bump rewrites recipes/NAME/recipe.yaml with each old → new replacement,
// each of which must apply.
func (s *qaSite) bump(name string, replacements ...string) {
	s.t.Helper()
	p := filepath.Join(s.work, "recipes", name, "recipe.yaml")
	data := readFile(s.t, p)
	for i := 0; i < len(replacements); i += 2 {
		if !strings.Contains(data, replacements[i]) {
			s.t.Fatalf("recipes/%s has no %q to replace", name, replacements[i])
		}
		data = strings.ReplaceAll(data, replacements[i], replacements[i+1])
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// qualify runs kbuild test on target's build with --attest, checks the
// phases it reports, verifies the evidence against the root and the
// index, compares its environment with the control plane's, and promotes
// the build to testing with it.
func (s *qaSite) qualify(target string, build int, phases ...string) {
	t := s.t
	t.Helper()
	name, version, _ := strings.Cut(target, "@")
	dir := name + "-" + version + "-" + strconv.Itoa(build)
	evFile := filepath.Join(s.site, "evidence", dir, "kbuild-test.intoto.json")
	junit := filepath.Join(s.work, dir+".junit.xml")
	start := time.Now()
	r := kbuild(t, s.work, nil, "test", target, "--build", strconv.Itoa(build), "--index", filepath.Join(s.site, "unstable"), "--public-key", s.idx+".pub",
		"--kubeconfig", s.cluster.Kubeconfig, "--plain-http", "--wait", "90s", "--junit", junit, "--log-file", filepath.Join(s.work, dir+".log"),
		"--attest", "--sign-key", s.qa+".key", "--root", s.root, "-o", evFile)
	t.Logf("kbuild test %s build %d: %s\n%s", target, build, time.Since(start).Round(time.Millisecond), r.stdout)
	if r.code != 0 {
		log, _ := os.ReadFile(filepath.Join(s.work, dir+".log"))
		t.Fatalf("kbuild test %s --build %d: %s\nlog:\n%s", target, build, r, log)
	}
	for _, p := range phases {
		if !strings.Contains(r.stdout, "ok   "+p) {
			t.Errorf("kbuild test %s --build %d did not pass %q:\n%s", target, build, p, r.stdout)
		}
	}
	if b, _ := os.ReadFile(junit); !strings.Contains(string(b), `failures="0"`) {
		t.Errorf("junit of %s:\n%s", target, b)
	}

	// The evidence verifies against the root and the index it was made
	// from, and its environment is the control plane's, read from it.
	root, err := siteread.ReadRootFile(s.root)
	if err != nil {
		t.Fatal(err)
	}
	x, err := index.ParseIndex([]byte(readFile(t, filepath.Join(s.site, "unstable", "index.yaml"))))
	if err != nil {
		t.Fatal(err)
	}
	v, err := evidence.Verify([]byte(readFile(t, evFile)), root, x, time.Now())
	if err != nil {
		t.Fatalf("the evidence of %s: %v", target, err)
	}
	cfg, err := s.cluster.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	sv, err := kubernetes.NewForConfigOrDie(cfg).Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if want := evidence.KubernetesMinor(sv.GitVersion); v.Result != evidence.Pass || v.Env["kubernetes"] != want || v.Env["arch"] != "amd64" {
		t.Errorf("evidence of %s: %s on %v, want pass on kubernetes=%s (the control plane's %s), arch=amd64", target, v.Result, v.Env, want, sv.GitVersion)
	}
	if r := runInProcess("promote", target, "--build", strconv.Itoa(build), "--to", "testing", "--root", s.root, "--site", s.site, "--suites", s.suites,
		"--sign-key", s.idx+".key", "--allow-new"); r.code != 0 || !strings.Contains(r.stdout, "promoted "+name+" "+version+" build "+strconv.Itoa(build)+" from unstable to testing") {
		t.Fatalf("promote %s with kbuild test's evidence: %s", target, r)
	}
}

// verifyTesting verifies the testing suite and the evidence of what it
// holds, as a subscriber does.
func (s *qaSite) verifyTesting() {
	s.t.Helper()
	if r := runInProcess("repo", "verify", "--index", filepath.Join(s.site, "testing"), "--root-key", s.rootKey+".pub", "--evidence", filepath.Join(s.site, "evidence")); r.code != 0 {
		s.t.Fatalf("repo verify testing with its evidence: %s", r)
	}
}

// TestQualifyExamples qualifies the bundled examples, built and published
// by kbuild twice (build 1, then build 2 with a change), on the real
// control plane: kbuild test installs, upgrades from build 1, rolls back
// and uninstalls each of smart-proxy (a chart with a Deployment and a
// Service), virt-template (a controller with a CRD applied on upgrade,
// upgradeCRDs: CreateReplace) and virt-stack (a meta package whose
// requirements bring virt-template in); the signed evidence verifies, is
// about the control plane's version, and promote accepts it.
func TestQualifyExamples(t *testing.T) {
	reg := testenv.Registry(t)
	work := t.TempDir()
	if err := copyDir(filepath.Join(repoRoot, "examples"), filepath.Join(work, "recipes")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(work, "recipes", "examples.go"))
	s := newQASite(t, work, reg)
	s.publishAll("build 1")
	s.bump("smart-proxy", "build: 1", "build: 2", "replicas: 2", "replicas: 3")
	s.bump("virt-template", "build: 1", "build: 2", "replicas: 2", "replicas: 3")
	s.bump("virt-stack", "build: 1", "build: 2", "VM templates with", "KubeVirt VM templates with")
	s.publishAll("build 2")
	s.cluster = controlplane.ForTest(t)

	s.qualify("smart-proxy@3.14.0", 2, "install smart-proxy 3.14.0 build 2", "upgrade from smart-proxy 3.14.0 build 1", "rollback to smart-proxy 3.14.0 build 1", "uninstall")
	s.qualify("virt-template@0.2.2", 2, "install virt-template 0.2.2 build 2", "upgrade from virt-template 0.2.2 build 1", "rollback to virt-template 0.2.2 build 1", "uninstall")
	s.qualify("virt-stack@1.0.0", 2, "install virt-stack 1.0.0 build 2", "upgrade from virt-stack 1.0.0 build 1", "rollback to virt-stack 1.0.0 build 1", "uninstall")
	s.verifyTesting()
}

// TestQualifyForemanStack qualifies the foreman-stack release set as the
// recipes build it (foreman, pulp, candlepin and smart-proxy from charts
// of the upstream shape at a git commit, stand-in images by digest),
// published twice: set build 3 moves candlepin to a build 2 whose Service
// changed, so kbuild test installs the set's four members in dependency
// order (their PersistentVolumeClaims bound, migration Jobs complete),
// upgrades from set build 2, skips the rollback (the set does not
// declare it safe) and uninstalls; the evidence verifies, names the
// control plane's version, and promote moves the set with it.
func TestQualifyForemanStack(t *testing.T) {
	s := foremanStackTwice(t, testenv.Registry(t), false)
	s.cluster = controlplane.ForTest(t)
	s.qualify("foreman-stack@3.15.0", 3, "install foreman-stack 3.15.0 build 3", "digests foreman-stack 3.15.0 build 3",
		"upgrade from foreman-stack 3.15.0 build 2", "uninstall after the upgrade from foreman-stack 3.15.0 build 2")
	s.verifyTesting()
}

// foremanStackTwice publishes the Foreman stack's recipes, then candlepin
// build 2 (its Service changed) and the set's build 3 pinning it
// (declaring rollback.safe when rollbackSafe, for the benchmark).
func foremanStackTwice(t testing.TB, reg string, rollbackSafe bool) *qaSite {
	fs := newForemanStack(t, reg)
	s := newQASite(t, fs.work, reg)
	s.publishAll("the stack")
	s.bump("candlepin", "build: 1", "build: 2", "build:candlepin@3.15.0+build.1", "build:candlepin@3.15.0+build.2",
		"        candlepin:\n", "        candlepin:\n          service: {port: 23444}\n")
	s.bump("foreman-stack", "build: 2", "build: 3", "build:candlepin@3.15.0+build.1", "build:candlepin@3.15.0+build.2",
		"package: candlepin\n            version: \"=3.15.0+build.1\"", "package: candlepin\n            version: \"=3.15.0+build.2\"")
	if rollbackSafe {
		s.bump("foreman-stack", "rollback: {safe: false}", "rollback: {safe: true}")
	}
	s.publishAll("candlepin build 2 and the set's build 3")
	return s
}

// BenchmarkQualifyForemanStack times the whole qualification of the
// foreman-stack set (build 3, upgraded from build 2, rolled back, as
// foremanStackTwice publishes it) on a fresh local control plane per
// iteration, split into the control plane's start and each phase, with
// kbuild's own CPU time per phase (qualifybench.Run: getrusage of this
// process; the control plane runs in processes of its own), the garbage
// collector set as kbuild test sets it (tuneGC): the target is kbuild's
// share ≤ 10 % of the wall time, the start ≤ 20 s.
//
//	bash scripts/test.sh ./cmd/kbuild/ -run '^$' -bench QualifyForemanStack -benchtime 3x
func BenchmarkQualifyForemanStack(b *testing.B) {
	reg := testenv.Registry(b)
	kcp := testenv.Tool(b, "kcp")
	s := foremanStackTwice(b, reg, true)
	x, err := index.ParseIndex([]byte(readFile(b, filepath.Join(s.site, "unstable", "index.yaml"))))
	if err != nil {
		b.Fatal(err)
	}
	// the garbage collector set as kbuild test sets it (as the commands
	// run in process here leave it)
	tuneGC(&Env{Getenv: os.Getenv})
	qualifybench.Run(b, kcp, qualify.Qualification{Index: x, Target: evidence.Target{Package: "foreman-stack", Version: "3.15.0", Build: 3},
		Timeout: 2 * time.Minute, PlainHTTP: plainhttp.Policy{Loopback: true}}, qualify.PhaseRollback)
}
