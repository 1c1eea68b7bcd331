package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// pinnedUses is a third-party action pinned by full commit with its
// version in a comment: `uses: owner/repo@<40 hex> # v1.2.3`.
var pinnedUses = regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$`)

var usesLine = regexp.MustCompile(`^\s*(?:-\s+)?uses:\s*(.*)$`)

// scriptRef finds the repository scripts a workflow runs.
var scriptRef = regexp.MustCompile(`scripts/[\w.-]+\.sh`)

// TestWorkflowsLint runs actionlint on .github/workflows and checks that
// every action is pinned by commit and every script a workflow runs exists
// and is executable.
func TestWorkflowsLint(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(repoRoot, ".github", "workflows", "*.yml"))
	if len(files) < 2 {
		t.Fatalf("workflows = %v, want pr.yml and publish.yml at least", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for line := 1; sc.Scan(); line++ {
			m := usesLine.FindStringSubmatch(sc.Text())
			if m == nil || strings.HasPrefix(m[1], "./") {
				continue
			}
			if !pinnedUses.MatchString(strings.TrimSpace(m[1])) {
				t.Errorf("%s:%d: uses: %s; pin third-party actions by full commit SHA with a # vX.Y.Z comment", filepath.Base(f), line, m[1])
			}
		}
		for _, s := range scriptRef.FindAllString(string(data), -1) {
			fi, err := os.Stat(filepath.Join(repoRoot, s))
			if err != nil || fi.Mode()&0o111 == 0 {
				t.Errorf("%s runs %s, which is not an executable file in the repository", filepath.Base(f), s)
			}
		}
	}

	actionlint := testenv.Tool(t, "actionlint")
	cmd := exec.Command(actionlint, "-no-color")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("actionlint: %v\n%s", err, out)
	}
}

// TestShellcheck runs shellcheck (Debian's) on every shell script of the
// repository, the scripts the action and the workflows run included, and
// actionlint on the kubepkg-recipes workflow kept in testdata.
func TestShellcheck(t *testing.T) {
	shellcheck := testenv.Tool(t, "shellcheck")
	ls := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "*.sh")
	ls.Dir = repoRoot
	out, err := ls.Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	files := strings.Fields(string(out))
	for _, want := range []string{"scripts/release.sh", "scripts/action-install.sh", "scripts/action-run.sh", "scripts/publish.sh", "scripts/qualify-plan.sh", "scripts/qualify-run.sh", "scripts/qualify-pr.sh", "cmd/kbuild/testdata/kubepkg/scripts/build-all.sh"} {
		if !slices.Contains(files, want) {
			t.Errorf("git ls-files does not list %s", want)
		}
	}
	cmd := exec.Command(shellcheck, append([]string{"-f", "gcc"}, files...)...)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
	actionlint := testenv.Tool(t, "actionlint")
	lint := exec.Command(actionlint, "-no-color", filepath.Join("cmd", "kbuild", "testdata", "kubepkg", ".github", "workflows", "publish.yaml"))
	lint.Dir = repoRoot
	if out, err := lint.CombinedOutput(); err != nil {
		t.Errorf("actionlint of the kubepkg-recipes workflow: %v\n%s", err, out)
	}
}

// script is one run of a script under scripts/.
type script struct {
	stdout, stderr string
	code           int
}

func (s script) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", s.code, s.stdout, s.stderr)
}

// runScript runs scripts/NAME with bash in dir, with env added to the
// test's environment.
func runScript(t *testing.T, dir string, env []string, name string, args ...string) script {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(repoRoot, "scripts", name)}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CI=true", "GITHUB_ACTIONS=")
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s: %v", name, err)
	}
	return script{stdout.String(), stderr.String(), code}
}

// workflowRun holds what stands in for GitHub while the scripts run: the
// recipes repository, a local registry for GHCR, a directory served over
// HTTP for Pages and the environment the workflows set.
type workflowRun struct {
	t     *testing.T
	repo  string
	pages string
	key   *trust.PrivateKey
	env   []string
	// rootKey is the root key file once the repository has a root
	// (suites).
	rootKey string
	// restore starts each publish from a copy of what Pages serves (the
	// site cache); otherwise from an empty site.
	restore bool
}

// env returns the common environment plus extra.
func (w *workflowRun) with(extra ...string) []string {
	return append(append([]string{}, w.env...), extra...)
}

// commit commits everything in the repository.
func (w *workflowRun) commit(msg string) {
	git(w.t, w.repo, "add", "-A")
	git(w.t, w.repo, "commit", "-q", "-m", msg)
}

// publish runs the jobs of publish.yml as the workflow does: plan, one
// build per shard into records/records-<index> (the artifact layout of
// download-artifact), publish, then deploys the site to Pages. It returns
// the plan. When kbuild publish is missing it fails the test, writes the
// index by hand so that the later steps still run, and checks anonymous
// pulls on that index.
func (w *workflowRun) publish(name string, wantShards [][]string, wantUpToDate []string) {
	t := w.t
	work := t.TempDir()
	output := filepath.Join(work, "github-output")
	r := runScript(t, w.repo, w.with("SHARDS=2", "GITHUB_OUTPUT="+output), "publish.sh", "plan")
	if r.code != 0 {
		t.Fatalf("%s: publish.sh plan: %s", name, r)
	}
	var plan builder.Plan
	if err := json.Unmarshal([]byte(r.stdout), &plan); err != nil {
		t.Fatalf("%s: plan is not JSON: %v\n%s", name, err, r)
	}
	var got [][]string
	for _, s := range plan.Shards {
		got = append(got, s.Recipes)
	}
	if fmt.Sprint(got) != fmt.Sprint(wantShards) || fmt.Sprint(plan.UpToDate) != fmt.Sprint(wantUpToDate) {
		t.Fatalf("%s: plan = %+v, want shards %v and up to date %v", name, plan, wantShards, wantUpToDate)
	}
	out, _ := os.ReadFile(output)
	if want := fmt.Sprintf("shards=%d\n", len(wantShards)); !strings.Contains(string(out), want) || !strings.Contains(string(out), "plan={") {
		t.Errorf("%s: $GITHUB_OUTPUT = %q, want plan= and %q", name, out, want)
	}

	records := filepath.Join(work, "records")
	for _, s := range plan.Shards {
		r := runScript(t, w.repo, w.with(fmt.Sprintf("DIST=%s/records-%d", records, s.Index)), "publish.sh", append([]string{"build"}, s.Recipes...)...)
		if r.code != 0 {
			t.Fatalf("%s: publish.sh build %v: %s", name, s.Recipes, r)
		}
	}

	site := filepath.Join(work, "_site")
	if w.restore { // the site the last run saved, as publish.yml restores it
		if err := copyDir(w.pages, site); err != nil {
			t.Fatal(err)
		}
	}
	r = runScript(t, w.repo, w.with("SITE="+site, "KBUILD_TRUST_KEY=keys/index.pub"), "publish.sh", "publish", records)
	if r.code != 0 && (strings.Contains(r.stderr, `unknown command "publish"`) || strings.Contains(r.stderr, "unknown flag")) {
		t.Errorf("%s: kbuild publish is not implemented (or lacks the flags publish.sh passes: RECORDS_DIR --registry --sign-key-env --site --index --public-key --plain-http): %s", name, r)
		w.handIndex(site, records)
		r = runScript(t, w.repo, w.with(), "check-anonymous-pull.sh", filepath.Join(site, "index.yaml"))
	}
	if r.code != 0 {
		t.Fatalf("%s: publish: %s", name, r)
	}
	if !regexp.MustCompile(`all \d+ charts pulled anonymously and match their digests`).MatchString(r.stderr) {
		t.Errorf("%s: no anonymous pull check: %s", name, r)
	}
	// Deploy: the site becomes what Pages serves.
	if err := os.RemoveAll(w.pages); err != nil {
		t.Fatal(err)
	}
	if err := copyDir(site, w.pages); err != nil {
		t.Fatal(err)
	}
}

// handIndex writes SITE/index.yaml with every version already served by
// Pages and every build record under records, unsigned: what kbuild
// publish would publish, for the steps after it while it is missing.
func (w *workflowRun) handIndex(site, records string) {
	t := w.t
	b := index.NewBuilder()
	if data, err := os.ReadFile(filepath.Join(w.pages, "index.yaml")); err == nil {
		x, err := index.ParseIndex(data)
		if err != nil {
			t.Fatal(err)
		}
		for name, p := range x.Packages {
			for _, v := range p.Versions {
				rec := &spec.PackageSource{APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind, Metadata: spec.RecordMetadata{Name: name}, Spec: v.Spec}
				if err := b.Add("pages", rec, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	builds, err := dist.Read(records)
	if err != nil {
		t.Fatal(err)
	}
	for _, bd := range builds {
		if err := b.Add(bd.File, &bd.Record, nil); err != nil {
			t.Fatal(err)
		}
	}
	x, err := b.Index(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	data, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(site, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(site, "index.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// published returns "name version build" of every version Pages serves.
func (w *workflowRun) published() []string {
	data, err := os.ReadFile(filepath.Join(w.pages, "index.yaml"))
	if err != nil {
		w.t.Fatal(err)
	}
	x, err := index.ParseIndex(data)
	if err != nil {
		w.t.Fatal(err)
	}
	names := make([]string, 0, len(x.Packages))
	for name := range x.Packages {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []string
	for _, name := range names {
		for _, v := range x.Packages[name].Versions {
			out = append(out, fmt.Sprintf("%s %s %d", name, v.Version, v.Build))
		}
	}
	return out
}

// TestWorkflowScripts runs the scripts of pr.yml and publish.yml in the
// order GitHub would, against a local registry standing in for GHCR and a
// directory served over HTTP standing in for Pages: a pull request, the
// first publish, an incremental publish, a pull request that would change
// a published version (which must fail), and the weekly re-signing.
func TestWorkflowScripts(t *testing.T) {
	reg := testenv.Registry(t)
	helm := testenv.Tool(t, "helm")
	testenv.Tool(t, "curl")
	testenv.Tool(t, "git")

	w := &workflowRun{t: t, repo: examplesRepo(t), pages: t.TempDir()}
	srv := httptest.NewServer(http.FileServer(http.Dir(w.pages)))
	defer srv.Close()
	key, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := key.MarshalPEM()
	if err != nil {
		t.Fatal(err)
	}
	w.key = key
	if err := os.MkdirAll(filepath.Join(w.repo, "keys"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.repo, "keys", "index.pub"), key.Public().PEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	w.commit("keys")
	ghcr := uniqueRepo(t, reg)
	w.env = []string{
		"KBUILD=" + kbuildBin,
		"HELM=" + helm,
		"KBUILD_PLAIN_HTTP=1",
		"KBUILD_CACHE_DIR=" + t.TempDir(),
		"PAGES_URL=" + srv.URL,
		"KBUILD_REGISTRY=" + ghcr + "/packages",
		"KBUILD_SIGN_KEY=" + string(pem),
	}
	sp := filepath.Join(w.repo, "recipes", "smart-proxy", "recipe.yaml")
	vt := filepath.Join(w.repo, "recipes", "virt-template", "recipe.yaml")
	vs := filepath.Join(w.repo, "recipes", "virt-stack", "recipe.yaml")

	// 1. A pull request: smart-proxy gets a new build with more replicas.
	git(t, w.repo, "update-ref", "refs/remotes/origin/main", "HEAD")
	git(t, w.repo, "checkout", "-q", "-b", "more-replicas")
	edit(t, sp, "build: 1", "build: 2")
	edit(t, sp, "replicas: 2", "replicas: 3")
	w.commit("smart-proxy: 3 replicas")
	summary := filepath.Join(t.TempDir(), "summary.md")
	r := runScript(t, w.repo, w.with("BASE_REF=origin/main", "GITHUB_STEP_SUMMARY="+summary, "KBUILD_REGISTRY="+ghcr+"/pr"), "pr-build.sh")
	if r.code != 0 {
		t.Fatalf("pr-build.sh: %s", r)
	}
	md, _ := os.ReadFile(summary)
	for _, want := range []string{
		"## Recipes changed by this pull request\n",
		"### smart-proxy: 3.14.0 build 1 → 3.14.0 build 2\n",
		"-  replicas: 2\n+  replicas: 3\n",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("pr-build.sh summary lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "virt-template") || !strings.Contains(r.stderr, "nothing is published at "+srv.URL+"/index.yaml yet") {
		t.Errorf("pr-build.sh went beyond the changed recipe or checked an index that is not there:\n%s\n%s", md, r)
	}
	if !strings.Contains(r.stdout, ghcr+"/pr/smart-proxy/smart-proxy:3.14.0-2@sha256:") {
		t.Errorf("pr-build.sh did not build into the throwaway registry: %s", r)
	}
	git(t, w.repo, "checkout", "-q", "main")
	git(t, w.repo, "merge", "-q", "--ff-only", "more-replicas")

	// 2. The first publish: nothing at Pages, everything is built.
	w.publish("first publish", [][]string{{"recipes/smart-proxy", "recipes/virt-template"}, {"recipes/virt-stack"}}, []string{})
	if got, want := fmt.Sprint(w.published()), "[smart-proxy 3.14.0 2 virt-stack 1.0.0 1 virt-template 0.2.2 1]"; got != want {
		t.Errorf("published after the first run: %s, want %s", got, want)
	}
	w.checkSigned("first publish")

	// 3. An incremental publish: only the new build of virt-stack.
	edit(t, vs, "build: 1", "build: 2")
	edit(t, vs, `version: ">=0.2.2 <0.3.0"`, `version: ">=0.2.2 <0.4.0"`)
	w.commit("virt-stack: allow virt-template 0.3")
	w.publish("incremental publish", [][]string{{"recipes/virt-stack"}}, []string{"recipes/smart-proxy", "recipes/virt-template"})
	if got, want := fmt.Sprint(w.published()), "[smart-proxy 3.14.0 2 virt-stack 1.0.0 2 virt-stack 1.0.0 1 virt-template 0.2.2 1]"; got != want {
		t.Errorf("published after the second run: %s, want %s", got, want)
	}
	w.checkSigned("incremental publish")

	// 4. A pull request that changes a published version fails.
	git(t, w.repo, "update-ref", "refs/remotes/origin/main", "HEAD")
	git(t, w.repo, "checkout", "-q", "-b", "sneaky")
	edit(t, vt, "replicas: 2", "replicas: 4")
	w.commit("virt-template: 4 replicas, same build")
	summary = filepath.Join(t.TempDir(), "summary.md")
	r = runScript(t, w.repo, w.with("BASE_REF=origin/main", "GITHUB_STEP_SUMMARY="+summary, "KBUILD_REGISTRY="+ghcr+"/pr"), "pr-build.sh")
	want := "virt-template@0.2.2 build 1 is already published with different content; published versions do not change, give the recipe a new build number"
	md, _ = os.ReadFile(summary)
	if r.code == 0 || !strings.Contains(r.stderr, want) || !strings.Contains(string(md), "> [!CAUTION]\n> error: recipe recipes/virt-template: "+want) {
		t.Errorf("pr-build.sh of a changed published version: want a failure with %q in stderr and summary: %s\nsummary:\n%s", want, r, md)
	}
	if !strings.Contains(string(md), "-  replicas: 2\n+  replicas: 4\n") {
		t.Errorf("pr-build.sh summary lacks the diff of the refused change:\n%s", md)
	}
	git(t, w.repo, "checkout", "-q", "main")

	// 5. The weekly run: nothing to build, the index is re-signed.
	w.publish("weekly re-signing", nil, []string{"recipes/smart-proxy", "recipes/virt-stack", "recipes/virt-template"})
	if got, want := fmt.Sprint(w.published()), "[smart-proxy 3.14.0 2 virt-stack 1.0.0 2 virt-stack 1.0.0 1 virt-template 0.2.2 1]"; got != want {
		t.Errorf("published after re-signing: %s, want %s", got, want)
	}
	w.checkSigned("weekly re-signing")

	// 6. Suites: a root of trust with a qa role and a suites file serving
	// unstable at the site root. The next publish moves the index into
	// unstable; /index.yaml stays, the same signed index. The suites file
	// is ci/suites.yaml (the reusable workflows' input suites, SUITES),
	// and ./suites.yaml is a decoy no step may read: every later step
	// reads the one SUITES names.
	qa := w.suites("ci/suites.yaml")
	w.env = append(w.env, "SUITES=ci/suites.yaml")
	w.publish("publish into suites", nil, []string{"recipes/smart-proxy", "recipes/virt-stack", "recipes/virt-template"})
	if a, b := readFile(t, filepath.Join(w.pages, "index.yaml")), readFile(t, filepath.Join(w.pages, "unstable", "index.yaml")); a != b {
		t.Error("Pages' /index.yaml is not the unstable suite's index")
	}
	w.checkSigned("publish into suites")
	w.checkRoot("unstable", 4)

	// 7. QA attests smart-proxy and commits the evidence; the next
	// publish copies it into the site.
	if r := kbuild(t, w.repo, nil, "attest", "smart-proxy@3.14.0", "--build", "2", "--result", "pass", "--env", "kubernetes=1.33,arch=amd64",
		"--sign-key", qa, "--root", "keys/root.yaml", "--site", w.pages, "--suites", "ci/suites.yaml", "-o", "evidence/smart-proxy-amd64.intoto.json"); r.code != 0 {
		t.Fatalf("attest: %s", r)
	}
	w.commit("evidence: smart-proxy 3.14.0 build 2 passes on 1.33, amd64")
	w.publish("publish the evidence", nil, []string{"recipes/smart-proxy", "recipes/virt-stack", "recipes/virt-template"})
	if _, err := os.Stat(filepath.Join(w.pages, "evidence", "smart-proxy-3.14.0-2", "arch=amd64,kubernetes=1.33.intoto.json")); err != nil {
		t.Errorf("Pages serves no evidence: %v", err)
	}

	// 8. promote.yml: restore the site, promote, deploy.
	stale := t.TempDir()
	restored := filepath.Join(t.TempDir(), "_site")
	if err := copyDir(w.pages, restored); err != nil {
		t.Fatal(err)
	}
	if err := copyDir(w.pages, stale); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(stale, "unstable", "index.yaml"), []byte("old\n"), 0o644)
	r = runScript(t, w.repo, w.with("SITE="+stale), "publish.sh", "promote", "smart-proxy@3.14.0", "2", "testing")
	if r.code == 0 || !strings.Contains(r.stderr, "is not the index Pages serves") {
		t.Errorf("promote on a stale site: %s", r)
	}
	r = runScript(t, w.repo, w.with("SITE="+restored), "publish.sh", "promote", "smart-proxy@3.14.0", "2", "testing")
	if r.code != 0 || !strings.Contains(r.stdout, "promoted smart-proxy 3.14.0 build 2 from unstable to testing") || !strings.Contains(r.stderr, "charts pulled anonymously") {
		t.Fatalf("publish.sh promote: %s", r)
	}
	// The promotion reached testing's followable repository (repo follow):
	// what Flux, Argo CD and Helm clusters follow, signed for cosign.
	followed := regexp.MustCompile(`(?m)^testing: copied oci://(\S+/suites/testing/smart-proxy:3\.14\.0-2)$`).FindStringSubmatch(r.stdout)
	if followed == nil {
		t.Fatalf("publish.sh promote did not copy smart-proxy 3.14.0-2 into testing's followable repository:\n%s", r.stdout)
	}
	t.Run("cosign verifies the followed chart", func(t *testing.T) {
		pub := filepath.Join(w.repo, "keys", "index.pub")
		cmd := exec.Command(testenv.Tool(t, "cosign"), "verify", "--key", pub, "--insecure-ignore-tlog=true", "--allow-http-registry", followed[1])
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("cosign verify %s: %v\n%s", followed[1], err, out)
		}
	})
	if err := os.RemoveAll(w.pages); err != nil {
		t.Fatal(err)
	}
	if err := copyDir(restored, w.pages); err != nil {
		t.Fatal(err)
	}
	w.checkRoot("testing", 1)
	if page := readFile(t, filepath.Join(w.pages, "unstable", "packages", "smart-proxy.html")); !strings.Contains(page, `<a href="../../testing/packages/smart-proxy.html#v3.14.0-2">testing</a>`) {
		t.Error("the unstable suite's page of smart-proxy does not say testing holds build 2")
	}
	// A publish whose restored site lacks testing would take it down.
	w.publishRefused("a site without testing", "the restored site is incomplete and deploying it would remove suite testing")

	// 9. The weekly run on the restored site re-signs testing too.
	before := readFile(t, filepath.Join(w.pages, "testing", "index.yaml"))
	// An index is generated in whole seconds and signed deterministically:
	// re-signed within the second of the promotion it would be the same
	// bytes. Start the weekly run in the next second.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	w.restore = true
	w.publish("weekly re-signing with suites", nil, []string{"recipes/smart-proxy", "recipes/virt-stack", "recipes/virt-template"})
	if after := readFile(t, filepath.Join(w.pages, "testing", "index.yaml")); after == before {
		t.Error("the weekly publish did not re-sign the testing suite")
	}
	w.checkRoot("testing", 1)
	w.checkRoot("unstable", 4)
}

// suites adds a root of trust (root and qa keys made here, the index key
// the repository's) and the suites file file to the repository, with a
// decoy suites.yaml at the root unless file is suites.yaml, and returns
// the qa key file.
func (w *workflowRun) suites(file string) string {
	t := w.t
	keys := t.TempDir()
	for _, k := range []string{"root", "qa"} {
		if r := kbuild(t, keys, nil, "repo", "keygen", filepath.Join(keys, k)); r.code != 0 {
			t.Fatal(r)
		}
	}
	root := filepath.Join(w.repo, "keys", "root.yaml")
	if r := kbuild(t, w.repo, nil, "trust", "root", "new", "--root-key", filepath.Join(keys, "root.pub"), "--index-key", "keys/index.pub", "--qa-key", filepath.Join(keys, "qa.pub"), "-o", root); r.code != 0 {
		t.Fatal(r)
	}
	if r := kbuild(t, w.repo, nil, "trust", "root", "sign", root, "--sign-key", filepath.Join(keys, "root.key")); r.code != 0 {
		t.Fatal(r)
	}
	w.rootKey = filepath.Join(keys, "root.pub")
	if file != "suites.yaml" {
		os.WriteFile(filepath.Join(w.repo, "suites.yaml"), []byte("# not the suites file: SUITES names it\n"), 0o644)
	}
	os.MkdirAll(filepath.Dir(filepath.Join(w.repo, file)), 0o755)
	os.WriteFile(filepath.Join(w.repo, file), []byte(`apiVersion: kbuild.dev/v1
kind: Suites
rootSuite: unstable
suites:
  - name: unstable
  - name: testing
    policy: {kubernetesMinors: 1, architectures: [amd64], role: qa}
`), 0o644)
	w.commit("suites: unstable and testing, under a root with a qa role")
	return filepath.Join(keys, "qa.key")
}

// checkRoot verifies the suite Pages serves as a subscriber pinning the
// root key does, and that it holds versions versions.
func (w *workflowRun) checkRoot(suite string, versions int) {
	r := kbuild(w.t, w.repo, nil, "repo", "verify", "--index", filepath.Join(w.pages, suite, "index.yaml"), "--root-key", w.rootKey)
	if want := fmt.Sprintf("packages, %d versions", versions); r.code != 0 || !strings.Contains(r.stdout, want) {
		w.t.Errorf("Pages' %s suite does not verify from the root key with %d versions: %s", suite, versions, r)
	}
}

// publishRefused runs publish.sh publish on an empty site and wants it
// refused with want.
func (w *workflowRun) publishRefused(name, want string) {
	r := runScript(w.t, w.repo, w.with("SITE="+filepath.Join(w.t.TempDir(), "_site")), "publish.sh", "publish", w.t.TempDir())
	if r.code == 0 || !strings.Contains(r.stderr, want) {
		w.t.Errorf("%s: publish.sh publish = %s, want a refusal with %q", name, r, want)
	}
}

// checkSigned verifies the index Pages serves with the repository's key,
// as a subscriber would; it reports nothing more while kbuild publish is
// missing (publish already failed the test).
func (w *workflowRun) checkSigned(name string) {
	data, _ := os.ReadFile(filepath.Join(w.pages, "index.yaml"))
	sig, err := os.ReadFile(filepath.Join(w.pages, "index.yaml.sig"))
	if err != nil {
		if !w.t.Failed() {
			w.t.Errorf("%s: Pages serves no index.yaml.sig: %v", name, err)
		}
		return
	}
	if _, err := trust.Verify(data, sig, &trust.Trust{IndexKeys: []*trust.PublicKey{w.key.Public()}}, trust.VerifyOptions{Now: time.Now()}); err != nil {
		w.t.Errorf("%s: the published index does not verify with keys/index.pub: %v", name, err)
	}
}
