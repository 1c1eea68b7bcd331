package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/controlplane"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/siteread"
)

// TestQualifyWorkflow runs the steps of qualify.yml locally end to end:
// the bundled examples published into the first suite of the loopback
// registry and site, scripts/qualify-plan.sh lists the three builds
// evidence/ has nothing for, scripts/qualify-run.sh qualifies them on the
// loopback control plane (standing in for one kind cell of the matrix)
// and signs each with the qa key, scripts/qualify-pr.sh pushes them on
// one branch and opens one pull request (a gh stand-in); once merged the
// plan is empty, and a second run proposes nothing.
func TestQualifyWorkflow(t *testing.T) {
	reg := testenv.Registry(t)
	work := t.TempDir()
	if err := copyDir(filepath.Join(repoRoot, "examples"), filepath.Join(work, "recipes")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(work, "recipes", "examples.go"))
	s := newQASite(t, work, reg)
	s.publishAll("the examples")

	repo, origin := filepath.Join(work, "repo"), filepath.Join(work, "origin.git")
	writeFiles(t, repo, map[string]string{"README.md": "recipes\n", "evidence/.keep": ""})
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "recipes")
	git(t, work, "clone", "-q", "--bare", repo, origin)
	git(t, repo, "remote", "add", "origin", origin)
	state := filepath.Join(work, "gh")
	os.MkdirAll(state, 0o755)
	gh := filepath.Join(work, "gh-stand-in")
	os.WriteFile(gh, []byte(ghStandIn), 0o755)
	qaKey := readFile(t, s.qa+".key")
	env := []string{"KBUILD=" + kbuildBin, "KBUILD_INDEX=" + filepath.Join(s.site, "unstable"), "KBUILD_TRUST_KEY=" + s.idx + ".pub",
		"KBUILD_PLAIN_HTTP=1", "GH=" + gh, "GH_STATE=" + state, "BASE=main", "GITHUB_STEP_SUMMARY=" + filepath.Join(work, "summary.md")}
	plan := func() (count, targets string) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "output")
		if r := runScript(t, repo, append(env, "GITHUB_OUTPUT="+out), "qualify-plan.sh"); r.code != 0 {
			t.Fatalf("qualify-plan.sh: %s", r)
		}
		o := readFile(t, out)
		count, rest, _ := strings.Cut(strings.TrimPrefix(o, "count="), "\n")
		targets = strings.TrimSuffix(strings.TrimPrefix(rest, "targets<<KBUILD_TARGETS\n"), "KBUILD_TARGETS\n")
		return count, targets
	}

	count, targets := plan()
	if want := "smart-proxy@3.14.0 1\nvirt-stack@1.0.0 1\nvirt-template@0.2.2 1\n"; count != "3" || targets != want {
		t.Fatalf("plan: count %s, targets\n%s\nwant 3:\n%s", count, targets, want)
	}

	c := controlplane.ForTest(t)
	out := filepath.Join(work, "out")
	r := runScript(t, repo, append(env, "TARGETS="+targets, "CELL=kind-1.37-amd64", "KUBECONFIG="+c.Kubeconfig, "KBUILD_QA_KEY="+qaKey,
		"KBUILD_ROOT="+s.root, "OUT="+out, "LOG_URL=https://ci.example/runs/1"), "qualify-run.sh")
	if r.code != 0 {
		t.Fatalf("qualify-run.sh: %s", r)
	}
	root, err := siteread.ReadRootFile(s.root)
	if err != nil {
		t.Fatal(err)
	}
	x, err := index.ParseIndex([]byte(readFile(t, filepath.Join(s.site, "unstable", "index.yaml"))))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"smart-proxy-3.14.0-1/kind-1.37-amd64.intoto.json", "virt-stack-1.0.0-1/kind-1.37-amd64.intoto.json", "virt-template-0.2.2-1/kind-1.37-amd64.intoto.json"}
	for _, f := range files {
		v, err := evidence.Verify([]byte(readFile(t, filepath.Join(out, "evidence", f))), root, x, time.Now())
		if err != nil || v.Result != evidence.Pass || v.Env["kubernetes"] != "1.37" {
			t.Errorf("evidence %s: %v %+v", f, err, v)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "junit", "smart-proxy-3.14.0-1-kind-1.37-amd64.xml")); err != nil {
		t.Errorf("no JUnit: %v", err)
	}

	if r := runScript(t, repo, append(env, "IN="+filepath.Join(out, "evidence")), "qualify-pr.sh"); r.code != 0 {
		t.Fatalf("qualify-pr.sh: %s", r)
	}
	calls, _ := os.ReadFile(filepath.Join(state, "calls"))
	if want := "pr list --head kbuild-qualify --state open --json number --jq .[0].number // empty\npr create --head kbuild-qualify --base main --title evidence: kbuild test of 3 build and cluster pair(s) --body-file "; !strings.HasPrefix(string(calls), want) || strings.Count(string(calls), "\n") != 2 {
		t.Fatalf("gh calls:\n%s\nwant one list and one create", calls)
	}
	body := readFile(t, filepath.Join(state, "body-1"))
	for _, f := range files {
		if !strings.Contains(body, "evidence/"+f) {
			t.Errorf("the pull request's body does not list %s:\n%s", f, body)
		}
		if git(t, origin, "show", "kbuild-qualify:evidence/"+f) != readFile(t, filepath.Join(out, "evidence", f)) {
			t.Errorf("the pushed branch lacks evidence/%s", f)
		}
	}
	if branch := strings.TrimSpace(git(t, repo, "branch", "--show-current")); branch != "main" {
		t.Errorf("left on branch %s, want main", branch)
	}

	// Merged: nothing is left to qualify, and the same evidence again
	// opens nothing.
	git(t, repo, "merge", "-q", "--ff-only", "kbuild-qualify")
	if count, targets := plan(); count != "0" || targets != "" {
		t.Errorf("plan after the merge: %s %q, want nothing", count, targets)
	}
	if r := runScript(t, repo, append(env, "IN="+filepath.Join(out, "evidence")), "qualify-pr.sh"); r.code != 0 || !strings.Contains(r.stderr, "the evidence is committed already") {
		t.Fatalf("qualify-pr.sh again: %s", r)
	}
	if again, _ := os.ReadFile(filepath.Join(state, "calls")); string(again) != string(calls) {
		t.Errorf("a second run called gh:\n%s", again)
	}
}
