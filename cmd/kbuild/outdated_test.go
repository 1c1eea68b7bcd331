package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/internal/upstreamtest"
	"kbuild.dev/kbuild/watch"
)

// metaRecipe is a recipe of package name at version that builds nothing.
func metaRecipe(name, version string) string {
	return fmt.Sprintf("apiVersion: kubepkg.dev/v1\nkind: Recipe\nmetadata:\n  name: %s\n  annotations: {kubepkg.dev/description: \"x\"}\nspec:\n  version: %s\n  build: 1\n  package:\n    rollback: {safe: true}\n    variants: [{name: default}]\n", name, version)
}

// TestOutdated runs kbuild outdated over recipes following a releases
// API, a Helm repository and a listing (one recipe unwatched): the table,
// the JSON, and the exit status (4 outdated, 0 up to date, 1 an upstream
// that fails), and --offline refusing.
func TestOutdated(t *testing.T) {
	api := upstreamtest.GitHubAPI(t, "o/op", []upstreamtest.Release{{Tag: "v1.10.0"}, {Tag: "v1.9.2"}, {Tag: "v1.9.1-rc.1"}, {Tag: "v1.9.0"}})
	helm := upstreamtest.HelmRepo(t, []upstreamtest.HelmChart{{Name: "demo", Version: "1.0.0"}, {Name: "demo", Version: "2.0.0"}})
	listing := upstreamtest.Listing(t, []string{"3.14.0/", "3.15.0/", "3.15.1/", "nightly/"})
	work := t.TempDir()
	rule := func(upstream string) string {
		return "apiVersion: kbuild.dev/v1alpha1\nkind: Watch\nupstream:\n  " + upstream + "\n"
	}
	writeFiles(t, filepath.Join(work, "recipes"), map[string]string{
		"op/recipe.yaml":      metaRecipe("op", "1.9.0"),
		"op/watch.yaml":       rule(fmt.Sprintf("github: {repository: o/op, api: %q}\n  versions: {strip: [v], constraint: \"~1.9\"}", api)),
		"demo/recipe.yaml":    metaRecipe("demo", "2.0.0"),
		"demo/watch.yaml":     rule(fmt.Sprintf("helm: {repository: %q, chart: demo}", helm)),
		"foreman/recipe.yaml": metaRecipe("foreman", "3.15.0"),
		"foreman/watch.yaml":  rule(fmt.Sprintf("listing: {url: %q}\n  versions: {constraint: \"~3.15\"}", listing)),
		"plain/recipe.yaml":   metaRecipe("plain", "1.0.0"),
	})
	r := kbuild(t, work, nil, "outdated")
	if r.code != exitOutdated {
		t.Fatalf("kbuild outdated: %s; want exit %d", r, exitOutdated)
	}
	for _, row := range [][]string{
		{"recipes/demo", "helm " + helm + " demo", "2.0.0", "2.0.0", "up to date"},
		{"recipes/foreman", "listing " + listing, "3.15.0", "3.15.1", "outdated"},
		{"recipes/op", "github o/op at " + api, "1.9.0", "1.9.2", "outdated"},
		{"recipes/plain", "-", "-", "-", "unwatched"},
	} {
		if !strings.Contains(r.stdout, strings.Join(row, "  ")) && !containsFields(r.stdout, row) {
			t.Errorf("no row %q in\n%s", row, r.stdout)
		}
	}
	r = kbuild(t, work, nil, "outdated", "recipes/op", "recipes/demo", "--format", "json")
	var reports []watch.Report
	if err := json.Unmarshal([]byte(r.stdout), &reports); err != nil || r.code != exitOutdated {
		t.Fatalf("--format json: %v; %s", err, r)
	}
	// Sorted by directory: demo, then op.
	if len(reports) != 2 || reports[1].Upstreams[0].Newest != "1.9.2" || !reports[1].Upstreams[0].Outdated || reports[0].Upstreams[0].Outdated || reports[1].Upstreams[0].Refused != 2 {
		t.Errorf("reports = %+v", reports)
	}
	if r := kbuild(t, work, nil, "outdated", "recipes/demo"); r.code != 0 {
		t.Errorf("an up-to-date recipe: %s; want exit 0", r)
	}
	writeFiles(t, filepath.Join(work, "recipes"), map[string]string{
		"gone/recipe.yaml": metaRecipe("gone", "1.0.0"),
		"gone/watch.yaml":  rule(fmt.Sprintf("helm: {repository: %q, chart: gone}", helm)),
	})
	r = kbuild(t, work, nil, "outdated")
	if r.code != 1 || !strings.Contains(r.stderr, `error: recipes/gone: helm `+helm+` gone: `+helm+`/index.yaml lists no chart "gone"`) {
		t.Errorf("an upstream without the chart: %s; want exit 1 naming it", r)
	}
	r = kbuild(t, work, nil, "outdated", "--offline")
	if r.code != 1 || !strings.Contains(r.stderr, "looking upstream needs the network; run it without --offline") {
		t.Errorf("--offline: %s; want a clear refusal", r)
	}
}

// containsFields reports whether a line of out has the fields of row in
// order, however the table pads them.
func containsFields(out string, row []string) bool {
	for _, line := range strings.Split(out, "\n") {
		rest := line
		ok := true
		for _, f := range row {
			i := strings.Index(rest, f)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(f):]
		}
		if ok {
			return true
		}
	}
	return false
}

// TestBumpCommand bumps a meta package that follows a Helm repository:
// the recipe's version changes, the diff against git HEAD is printed, and
// a second bump changes nothing.
func TestBumpCommand(t *testing.T) {
	helm := upstreamtest.HelmRepo(t, []upstreamtest.HelmChart{{Name: "demo", Version: "1.0.0"}, {Name: "demo", Version: "1.2.0"}})
	work := t.TempDir()
	writeFiles(t, filepath.Join(work, "recipes", "demo"), map[string]string{
		"recipe.yaml": "# the demo stack\n" + metaRecipe("demo", "1.0.0"),
		"watch.yaml":  fmt.Sprintf("apiVersion: kbuild.dev/v1alpha1\nkind: Watch\nupstream:\n  helm: {repository: %q, chart: demo}\n", helm),
	})
	testenv.Git(t, work, "init", "-q")
	testenv.Git(t, work, "add", "-A")
	testenv.Git(t, work, "commit", "-q", "-m", "demo")
	r := kbuild(t, work, nil, "bump", "recipes/demo", "--cache-dir", filepath.Join(work, "cache"))
	if r.code != 0 || !strings.Contains(r.stdout, "bumped recipes/demo/recipe.yaml from 1.0.0 to 1.2.0") || !strings.Contains(r.stdout, "demo: 1.0.0 build 1 -> 1.2.0 build 1") {
		t.Fatalf("kbuild bump: %s", r)
	}
	got, _ := os.ReadFile(filepath.Join(work, "recipes", "demo", "recipe.yaml"))
	if want := "# the demo stack\n" + metaRecipe("demo", "1.2.0"); string(got) != want {
		t.Errorf("recipe.yaml =\n%s\nwant\n%s", got, want)
	}
	r = kbuild(t, work, nil, "bump", "recipes/demo", "--cache-dir", filepath.Join(work, "cache"))
	if r.code != 0 || r.stdout != "recipes/demo is at 1.2.0 already; nothing changed\n" {
		t.Errorf("a second bump: %s", r)
	}
}
