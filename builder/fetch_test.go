package builder

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/sources"
)

// TestFetchNamesEveryMissingSource prepares a recipe offline whose three
// sources (two URLs, one git commit written in upper case) are not cached:
// the error names all three, sorted, each with its recipe line and the
// recipe to fetch (which the command line turns into the command), the
// same on every run.
func TestFetchNamesEveryMissingSource(t *testing.T) {
	dir := filepath.Join("testdata", "missing-sources")
	f, err := sources.New(sources.WithOffline(true), sources.WithCacheDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(f, nil, WithJobs(3))
	if err != nil {
		t.Fatal(err)
	}
	var first string
	var firstErr error
	for range 5 {
		_, err := b.Prepare(context.Background(), dir)
		if err == nil {
			t.Fatal("Prepare offline with nothing cached succeeded")
		}
		msg := err.Error()
		if firstErr == nil {
			firstErr = err
		}
		if first == "" {
			first = msg
		} else if msg != first {
			t.Fatalf("the error changes between runs:\n%s\n---\n%s", first, msg)
		}
	}
	want := []string{
		"3 of 3 sources failed",
		"recipe.yaml line 14: source \"alpha\": offline: https://example.invalid/alpha.yaml (sha256:2222222222222222222222222222222222222222222222222222222222222222) is not in the cache",
		"recipe.yaml line 17: source \"tree\": offline: git https://example.invalid/repo.git@abcdefabcdefabcdefabcdefabcdefabcdefabcd is not in the cache",
		"recipe.yaml line 11: source \"zeta\": offline:",
	}
	for _, w := range want {
		if !strings.Contains(first, w) {
			t.Errorf("error lacks %q:\n%s", w, first)
		}
	}
	if strings.Contains(first, "recipe "+dir+":") || strings.Contains(first, "spec.sources.") {
		t.Errorf("error names the recipe directory or the source more than once:\n%s", first)
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(firstErr, &joined) || len(joined.Unwrap()) != 3 {
		t.Fatalf("error %v does not join the three sources' errors", firstErr)
	}
	for _, e := range joined.Unwrap() {
		var nc *sources.NotCachedError
		if !errors.As(e, &nc) || nc.Recipe != dir {
			t.Errorf("source error %v is not a *sources.NotCachedError naming the recipe %s to fetch", e, dir)
		}
	}
	if a, g, z := strings.Index(first, `source "alpha"`), strings.Index(first, `source "tree"`), strings.Index(first, `source "zeta"`); !(a < g && g < z) {
		t.Errorf("sources not in name order:\n%s", first)
	}
}

// TestFetchUnknownCommit prepares a recipe whose git source names a commit
// the repository does not have: the error names the recipe file, the line
// of the source and the commit.
func TestFetchUnknownCommit(t *testing.T) {
	gitBin := testenv.Tool(t, "git")
	repo := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(gitBin, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	if err := os.WriteFile(filepath.Join(repo, "a.yaml"), []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", ".")
	run("commit", "-q", "-m", "x")
	dir := filepath.Join(t.TempDir(), "demo")
	missing := strings.Repeat("ab", 20)
	data, err := os.ReadFile(filepath.Join("testdata", "missing-sources", RecipeFile))
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.NewReplacer("https://example.invalid/repo.git", "file://"+repo, "ABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCD", strings.ToUpper(missing)).Replace(string(data)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, RecipeFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := sources.New(sources.WithCacheDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Prepare(context.Background(), dir)
	want := filepath.Join(dir, RecipeFile) + " line 17: source \"tree\": git file://" + repo + "@" + missing
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Prepare = %v\nwant an error containing %q", err, want)
	}
}
