package main

import (
	"fmt"
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
