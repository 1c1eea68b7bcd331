package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/upstreamtest"
)

// ghStandIn stands in for the gh CLI at the seam of GitHub's API: pull
// requests are files under $GH_STATE, every call is logged to
// $GH_STATE/calls.
const ghStandIn = `#!/usr/bin/env bash
set -euo pipefail
echo "$*" >>"$GH_STATE/calls"
case "$1 $2" in
"pr list") f="$GH_STATE/pr-${4//\//_}"; [ -f "$f" ] && cat "$f"; exit 0 ;;
"pr create") n=$(( $(find "$GH_STATE" -name 'pr-*' | wc -l) + 1 )); echo "$n" >"$GH_STATE/pr-${4//\//_}"; cp "${10}" "$GH_STATE/body-$n" ;;
"pr edit") cp "$7" "$GH_STATE/body-$3" ;;
*) echo "gh stand-in: unexpected $*" >&2; exit 2 ;;
esac
`

// TestOutdatedWorkflow runs scripts/outdated-prs.sh, the steps of
// outdated.yml, twice over a recipes repository with an outdated, an
// up-to-date and an unwatched recipe: the first run pushes one branch and
// opens one pull request, for the outdated package only, with the bump's
// diff in its body; the second updates that pull request instead of
// opening another. The base branch is left as it was.
func TestOutdatedWorkflow(t *testing.T) {
	helm := upstreamtest.HelmRepo(t, []upstreamtest.HelmChart{{Name: "demo", Version: "1.0.0"}, {Name: "demo", Version: "1.2.0"}})
	work := t.TempDir()
	repo := filepath.Join(work, "repo")
	rule := fmt.Sprintf("apiVersion: kbuild.dev/v1alpha1\nkind: Watch\nupstream:\n  helm: {repository: %q, chart: demo}\n", helm)
	writeFiles(t, filepath.Join(repo, "recipes"), map[string]string{
		"demo/recipe.yaml":  metaRecipe("demo", "1.0.0"),
		"demo/watch.yaml":   rule,
		"same/recipe.yaml":  metaRecipe("same", "1.2.0"),
		"same/watch.yaml":   rule,
		"plain/recipe.yaml": metaRecipe("plain", "1.0.0"),
	})
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "recipes")
	origin := filepath.Join(work, "origin.git")
	git(t, work, "clone", "-q", "--bare", repo, origin)
	git(t, repo, "remote", "add", "origin", origin)
	state := filepath.Join(work, "gh")
	os.MkdirAll(state, 0o755)
	gh := filepath.Join(work, "gh-stand-in")
	os.WriteFile(gh, []byte(ghStandIn), 0o755)
	summary := filepath.Join(work, "summary.md")
	env := []string{"KBUILD=" + kbuildBin, "GH=" + gh, "GH_STATE=" + state, "BASE=main", "GITHUB_STEP_SUMMARY=" + summary, "KBUILD_CACHE_DIR=" + filepath.Join(work, "cache")}

	r := runScript(t, repo, env, "outdated-prs.sh")
	if r.code != 0 {
		t.Fatalf("first run: %s", r)
	}
	calls, _ := os.ReadFile(filepath.Join(state, "calls"))
	if want := "pr list --head kbuild-bump/demo --state open --json number --jq .[0].number // empty\npr create --head kbuild-bump/demo --base main --title demo: bump to 1.2.0 --body-file "; !strings.HasPrefix(string(calls), want) || strings.Count(string(calls), "\n") != 2 {
		t.Fatalf("gh calls:\n%s\nwant one list and one create for demo", calls)
	}
	body, _ := os.ReadFile(filepath.Join(state, "body-1"))
	if !strings.Contains(string(body), "Bumps `demo` from 1.0.0 to 1.2.0 (build 1).") || !strings.Contains(string(body), "1.0.0 build 1") {
		t.Errorf("pull request body:\n%s", body)
	}
	pushed := git(t, origin, "show", "kbuild-bump/demo:recipes/demo/recipe.yaml")
	if pushed != metaRecipe("demo", "1.2.0") {
		t.Errorf("the pushed branch's recipe:\n%s", pushed)
	}
	if branch := strings.TrimSpace(git(t, repo, "branch", "--show-current")); branch != "main" {
		t.Errorf("left on branch %s, want main", branch)
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "recipes", "demo", "recipe.yaml")); string(got) != metaRecipe("demo", "1.0.0") {
		t.Errorf("the base branch's recipe changed:\n%s", got)
	}
	if s, _ := os.ReadFile(summary); !strings.Contains(string(s), "recipes/demo") || !strings.Contains(string(s), "- demo: bump to 1.2.0") {
		t.Errorf("summary:\n%s", s)
	}

	r = runScript(t, repo, env, "outdated-prs.sh")
	if r.code != 0 {
		t.Fatalf("second run: %s", r)
	}
	calls, _ = os.ReadFile(filepath.Join(state, "calls"))
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[3], "pr edit 1 --title demo: bump to 1.2.0 --body-file ") || strings.Count(string(calls), "pr create") != 1 {
		t.Errorf("gh calls after the second run:\n%s\nwant the pull request updated, not a second one", calls)
	}
}

// setRecipe is a release set pinning a and b at 1.0.0 build 1.
const setRecipe = `apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: stack
  annotations: {kubepkg.dev/description: "a and b, tested together"}
spec:
  version: 1.0.0
  build: 1
  package:
    rollback: {safe: false}
    variants:
      - name: default
        requires:
          - package: a
            version: "=1.0.0+build.1"
          - package: b
            version: "=1.0.0+build.1"
`

// TestOutdatedWorkflowSets runs scripts/outdated-prs.sh over a recipes
// repository whose members a and b were bumped to 1.1.0 (their pull
// requests merged) while the release set still pins 1.0.0, against the
// published index served over HTTP: while b 1.1.0 is not published the
// set gets no pull request and the log says what it waits for; once it
// is, one pull request moves both pins and the set to 1.1.0 build 1, with
// the pins in its body; a further run updates that pull request.
func TestOutdatedWorkflowSets(t *testing.T) {
	work := t.TempDir()
	repo := filepath.Join(work, "repo")
	writeFiles(t, filepath.Join(repo, "recipes"), map[string]string{
		"a/recipe.yaml":     metaRecipe("a", "1.1.0"),
		"b/recipe.yaml":     metaRecipe("b", "1.1.0"),
		"stack/recipe.yaml": setRecipe,
	})
	if r := kbuild(t, repo, nil, "repo", "keygen", "keys/index"); r.code != 0 {
		t.Fatalf("keygen: %s", r)
	}
	signKey := filepath.Join(work, "index.key")
	os.Rename(filepath.Join(repo, "keys", "index.key"), signKey)
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "a and b 1.1.0; the set at 1.0.0")
	origin := filepath.Join(work, "origin.git")
	git(t, work, "clone", "-q", "--bare", repo, origin)
	git(t, repo, "remote", "add", "origin", origin)

	// What is published: built from the recipes as they were, signed.
	site := filepath.Join(work, "site")
	srv := httptest.NewServer(http.FileServer(http.Dir(site)))
	defer srv.Close()
	dist := filepath.Join(work, "dist")
	publishBuilds := func(builds ...[2]string) {
		t.Helper()
		for _, b := range builds {
			dir := filepath.Join(work, "published", b[0]+"-"+b[1])
			writeFiles(t, dir, map[string]string{"recipe.yaml": metaRecipe(b[0], b[1])})
			if r := kbuild(t, work, nil, "build", dir, "-o", dist, "--cache-dir", filepath.Join(work, "cache")); r.code != 0 {
				t.Fatalf("build %v: %s", b, r)
			}
		}
		if r := kbuild(t, work, nil, "repo", "index", dist, "-o", filepath.Join(site, "index.yaml"), "--sign-key", signKey); r.code != 0 {
			t.Fatalf("repo index: %s", r)
		}
	}
	publishBuilds([2]string{"a", "1.0.0"}, [2]string{"b", "1.0.0"}, [2]string{"a", "1.1.0"})

	state := filepath.Join(work, "gh")
	os.MkdirAll(state, 0o755)
	gh := filepath.Join(work, "gh-stand-in")
	os.WriteFile(gh, []byte(ghStandIn), 0o755)
	summary := filepath.Join(work, "summary.md")
	env := []string{"KBUILD=" + kbuildBin, "GH=" + gh, "GH_STATE=" + state, "BASE=main", "GITHUB_STEP_SUMMARY=" + summary,
		"KBUILD_CACHE_DIR=" + filepath.Join(work, "cache"), "KBUILD_INDEX=" + srv.URL + "/index.yaml", "KBUILD_TRUST_KEY=keys/index.pub"}

	r := runScript(t, repo, env, "outdated-prs.sh")
	if r.code != 0 {
		t.Fatalf("run before b 1.1.0 is published: %s", r)
	}
	if calls, _ := os.ReadFile(filepath.Join(state, "calls")); len(calls) != 0 {
		t.Errorf("gh calls before every member is published:\n%s\nwant none", calls)
	}
	if !strings.Contains(r.stderr, "recipes/stack: nothing to bump (recipes/stack waits until its members' builds are published: b 1.1.0 build 1") {
		t.Errorf("the run does not say what the set waits for: %s", r)
	}

	publishBuilds([2]string{"b", "1.1.0"})
	r = runScript(t, repo, env, "outdated-prs.sh")
	if r.code != 0 {
		t.Fatalf("run once b 1.1.0 is published: %s", r)
	}
	calls, _ := os.ReadFile(filepath.Join(state, "calls"))
	if want := "pr list --head kbuild-bump/stack --state open --json number --jq .[0].number // empty\npr create --head kbuild-bump/stack --base main --title stack: bump to 1.1.0 --body-file "; !strings.HasPrefix(string(calls), want) || strings.Count(string(calls), "\n") != 2 {
		t.Fatalf("gh calls:\n%s\nwant one list and one create for the set", calls)
	}
	body, _ := os.ReadFile(filepath.Join(state, "body-1"))
	if !strings.Contains(string(body), "Bumps `stack` from 1.0.0 to 1.1.0 (build 1): the release set's members at their published builds, a 1.0.0 build 1 -> 1.1.0 build 1, b 1.0.0 build 1 -> 1.1.0 build 1.") {
		t.Errorf("pull request body:\n%s", body)
	}
	pushed := git(t, origin, "show", "kbuild-bump/stack:recipes/stack/recipe.yaml")
	want := strings.NewReplacer("version: 1.0.0", "version: 1.1.0", `"=1.0.0+build.1"`, `"=1.1.0+build.1"`).Replace(setRecipe)
	if pushed != want {
		t.Errorf("the pushed branch's set:\n%s\nwant:\n%s", pushed, want)
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "recipes", "stack", "recipe.yaml")); string(got) != setRecipe {
		t.Errorf("the base branch's set changed:\n%s", got)
	}

	r = runScript(t, repo, env, "outdated-prs.sh")
	calls, _ = os.ReadFile(filepath.Join(state, "calls"))
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	if r.code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[3], "pr edit 1 --title stack: bump to 1.1.0 --body-file ") {
		t.Errorf("gh calls after a third run:\n%s\nwant the pull request updated: %s", calls, r)
	}
}
