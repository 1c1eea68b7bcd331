package builder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/testenv"
)

func TestRecipesCommit(t *testing.T) {
	repo := t.TempDir()
	recipes := filepath.Join(repo, "recipes")
	if err := os.MkdirAll(filepath.Join(recipes, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := RecipesCommit(recipes); got != "" {
		t.Errorf("RecipesCommit outside a git work tree = %q, want \"\"", got)
	}
	if err := os.WriteFile(filepath.Join(recipes, "app", "recipe.yaml"), []byte("build: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, repo, "init", "-q")
	testenv.Git(t, repo, "add", ".")
	testenv.Git(t, repo, "commit", "-q", "-m", "one")
	head := strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "HEAD"))
	if got := RecipesCommit(recipes); got != head {
		t.Errorf("RecipesCommit of a clean tree = %q, want %s", got, head)
	}
	// A change outside the recipes does not matter; one below them does.
	if err := os.WriteFile(filepath.Join(repo, "README"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := RecipesCommit(recipes); got != head {
		t.Errorf("RecipesCommit with a change outside the recipes = %q, want %s", got, head)
	}
	if err := os.WriteFile(filepath.Join(recipes, "app", "recipe.yaml"), []byte("build: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := RecipesCommit(recipes); got != "" {
		t.Errorf("RecipesCommit with an uncommitted recipe change = %q, want \"\"", got)
	}
	if got := RecipesCommit(""); got != "" {
		t.Errorf("RecipesCommit(\"\") = %q, want \"\"", got)
	}
}
