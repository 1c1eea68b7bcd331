package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/internal/testenv"
)

// TestInitRepoAdoption adopts kbuild in a new repository by the steps
// README documents ("Use kbuild from another repository"): kbuild init repo,
// repo keygen, a recipe, then the steps of the workflows init wrote, run
// locally through the action's command script (scripts/action-run.sh)
// against the real registry standing in for GHCR and a directory served
// over HTTP for Pages: test, the pull request's diff, then publish.yml's
// plan, build (one job per shard of the plan) and publish jobs, each in a
// fresh checkout with the build records handed on as artifacts, for the
// first publish and a second one over the site the first deployed. A subscriber then
// verifies the served index with the committed public key. actionlint
// checks the written workflows.
func TestInitRepoAdoption(t *testing.T) {
	reg := testenv.Registry(t)
	helm := testenv.Tool(t, "helm")
	actionlint := testenv.Tool(t, "actionlint")
	testenv.Tool(t, "git")
	repo := filepath.Join(t.TempDir(), "packages")

	// 1. kbuild init repo, which overwrites nothing.
	r := kbuild(t, filepath.Dir(repo), nil, "init", "repo", repo)
	if r.code != 0 || !strings.Contains(r.stdout, filepath.Join(repo, ".github", "workflows", "publish.yml")) {
		t.Fatalf("init repo: %s", r)
	}
	for _, f := range []string{"recipes/README.md", "suites.yaml", "KEYS.md", ".gitignore", ".github/workflows/pr.yml", ".github/workflows/publish.yml", ".github/workflows/promote.yml"} {
		if _, err := os.Stat(filepath.Join(repo, f)); err != nil {
			t.Errorf("init repo did not write %s", f)
		}
	}
	wf, _ := os.ReadFile(filepath.Join(repo, ".github", "workflows", "publish.yml"))
	ref := actionRefOf(t)
	if !strings.Contains(string(wf), "uses: kbuild-dev/kbuild/.github/workflows/reusable-publish.yml@"+ref+"\n") || !strings.Contains(string(wf), "kbuild-version: "+ref+"\n") || !strings.Contains(string(wf), "KBUILD_SIGN_KEY: ${{ secrets.KBUILD_SIGN_KEY }}") {
		t.Errorf("publish.yml does not call the reusable publish workflow at this kbuild's release with the signing key:\n%s", wf)
	}
	if r := kbuild(t, filepath.Dir(repo), nil, "init", "repo", repo); r.code != 1 || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("init repo over an existing repository: %s", r)
	}

	// 2. The key (KEYS.md) and a recipe, committed.
	if r := kbuild(t, repo, nil, "repo", "keygen", "keys/index"); r.code != 0 {
		t.Fatalf("keygen: %s", r)
	}
	pem, err := os.ReadFile(filepath.Join(repo, "keys", "index.key"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(repo, "keys", "index.key"))
	for _, name := range []string{"smart-proxy", "virt-template"} {
		if err := copyDir(filepath.Join(repoRoot, "examples", name), filepath.Join(repo, "recipes", name)); err != nil {
			t.Fatal(err)
		}
	}
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "kbuild init repo, keys/index.pub, smart-proxy, virt-template")
	if out := git(t, repo, "status", "--porcelain", "--ignored"); strings.Contains(out, ".key") {
		t.Errorf("the private key is not ignored: %s", out)
	}
	lint := exec.Command(actionlint, "-no-color")
	lint.Dir = repo
	if out, err := lint.CombinedOutput(); err != nil {
		t.Errorf("actionlint of the workflows init repo wrote: %v\n%s", err, out)
	}

	pages := t.TempDir()
	srv := httptest.NewServer(http.FileServer(http.Dir(pages)))
	defer srv.Close()
	ghcr := uniqueRepo(t, reg)
	env := []string{"KBUILD=" + kbuildBin, "HELM=" + helm, "KBUILD_PLAIN_HTTP=1", "KBUILD_CACHE_DIR=" + t.TempDir(), "PAGES_URL=" + srv.URL}
	step := func(extra []string, args ...string) script {
		t.Helper()
		return runScript(t, repo, append(append([]string{}, env...), extra...), "action-run.sh", args...)
	}

	// 3. pr.yml: test, then the diff of a pull request.
	if r := step(nil, "test"); r.code != 0 || !strings.Contains(r.stdout, "0 of 2 recipes failed") {
		t.Fatalf("action test: %s", r)
	}
	git(t, repo, "update-ref", "refs/remotes/origin/main", "HEAD")
	git(t, repo, "checkout", "-q", "-b", "more-replicas")
	rf := filepath.Join(repo, "recipes", "virt-template", "recipe.yaml")
	edit(t, rf, "build: 1", "build: 2")
	git(t, repo, "commit", "-qam", "virt-template: build 2")
	summary := filepath.Join(t.TempDir(), "summary.md")
	if r := step([]string{"BASE_REF=origin/main", "GITHUB_STEP_SUMMARY=" + summary, "KBUILD_REGISTRY=" + ghcr + "/pr"}, "diff"); r.code != 0 {
		t.Fatalf("action diff: %s", r)
	}
	if md, _ := os.ReadFile(summary); !strings.Contains(string(md), "virt-template") {
		t.Errorf("the pull request's summary does not name virt-template:\n%s", md)
	}
	git(t, repo, "checkout", "-q", "main")

	// 4. publish.yml twice, its three jobs as the reusable workflow runs
	// them: the first starts the repository (Pages is empty) and builds
	// both recipes in two shards, the second merges over what the first
	// deployed and builds only virt-template's new build.
	published := []string{"KBUILD_REGISTRY=" + ghcr + "/packages"}
	publishJobs(t, repo, append(append([]string{}, env...), published...), string(pem), pages, [][]string{{"recipes/smart-proxy"}, {"recipes/virt-template"}})
	git(t, repo, "merge", "-q", "more-replicas")
	publishJobs(t, repo, append(append([]string{}, env...), published...), string(pem), pages, [][]string{{"recipes/virt-template"}})

	// 5. A subscriber verifies the served index with the committed key.
	r = kbuild(t, repo, nil, "repo", "verify", "--index", srv.URL+"/index.yaml", "--public-key", "keys/index.pub", "--charts", "--plain-http")
	if r.code != 0 || !strings.Contains(r.stdout, "2 packages, 3 versions") {
		t.Fatalf("repo verify of the adopted repository's site: %s", r)
	}
}

// publishJobs runs the jobs of reusable-publish.yml through the action's
// command script, each in a fresh clone of repo as GitHub checks out
// every job: plan writes plan= and shards= to $GITHUB_OUTPUT; one build
// job per shard of that plan (the matrix fromJSON(plan).shards) keeps its
// records as the artifact records-INDEX; publish downloads them all under
// records/ and writes _site, which is then deployed to pages. wantShards
// are the recipes of each shard the plan must give.
func publishJobs(t *testing.T, repo string, env []string, signKey, pages string, wantShards [][]string) {
	t.Helper()
	checkout := func() string {
		dir := filepath.Join(t.TempDir(), "checkout")
		git(t, filepath.Dir(dir), "clone", "-q", repo, dir)
		return dir
	}
	job := func(dir string, extra []string, args ...string) script {
		t.Helper()
		return runScript(t, dir, append(append([]string{}, env...), extra...), "action-run.sh", args...)
	}

	// plan (SHARDS is the input shards)
	output := filepath.Join(t.TempDir(), "github-output")
	if r := job(checkout(), []string{"SHARDS=2", "GITHUB_OUTPUT=" + output}, "plan"); r.code != 0 {
		t.Fatalf("plan job: %s", r)
	}
	outputs := map[string]string{}
	data, _ := os.ReadFile(output)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			outputs[k] = v
		}
	}
	var plan builder.Plan
	if err := json.Unmarshal([]byte(outputs["plan"]), &plan); err != nil {
		t.Fatalf("the plan job's output plan is not JSON: %v\n%s", err, data)
	}
	var got [][]string
	for _, s := range plan.Shards {
		got = append(got, s.Recipes)
	}
	if fmt.Sprint(got) != fmt.Sprint(wantShards) || outputs["shards"] != strconv.Itoa(len(wantShards)) {
		t.Fatalf("plan job: shards=%s, plan %v; want %d shards %v", outputs["shards"], got, len(wantShards), wantShards)
	}

	// build, one job per shard; upload-artifact records-INDEX of dist/,
	// download-artifact pattern records-* into records/.
	records := filepath.Join(t.TempDir(), "records")
	for _, s := range plan.Shards {
		dir := checkout()
		if r := job(dir, []string{"DIST=dist"}, append([]string{"build"}, s.Recipes...)...); r.code != 0 {
			t.Fatalf("build job %d %v: %s", s.Index, s.Recipes, r)
		}
		if err := copyDir(filepath.Join(dir, "dist"), filepath.Join(records, fmt.Sprintf("records-%d", s.Index))); err != nil {
			t.Fatalf("build job %d kept no records: %v", s.Index, err)
		}
	}

	// publish, on the records of the build jobs; then deploy _site.
	dir := checkout()
	site := filepath.Join(dir, "_site")
	if r := job(dir, []string{"KBUILD_SIGN_KEY=" + signKey, "KBUILD_TRUST_KEY=keys/index.pub", "KBUILD_ROOT=keys/root.yaml", "SITE=_site"}, "publish", records); r.code != 0 {
		t.Fatalf("publish job: %s", r)
	}
	os.RemoveAll(pages)
	if err := copyDir(site, pages); err != nil {
		t.Fatal(err)
	}
}

// actionRefOf is the action ref init repo writes for the test binary.
func actionRefOf(t *testing.T) string {
	v := strings.Fields(kbuild(t, t.TempDir(), nil, "version").stdout)[1]
	if strings.HasPrefix(v, "v") {
		return v
	}
	return "main"
}
