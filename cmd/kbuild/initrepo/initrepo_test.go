package initrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrite writes the template: every file, dotfiles included, in order,
// {{REF}} replaced; a second write into the same directory overwrites
// nothing and says which file is there.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	files, err := Write(dir, "v9.9.9")
	want := ".github/workflows/pr.yml .github/workflows/promote.yml .github/workflows/publish.yml .gitignore KEYS.md keys/.gitkeep recipes/README.md suites.yaml"
	if err != nil || strings.Join(files, " ") != want {
		t.Fatalf("Write = %v, %v; want %s", files, err, want)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil || strings.Contains(string(data), "{{REF}}") {
			t.Errorf("%s: %v; want it written with {{REF}} replaced", f, err)
		}
	}
	pr, _ := os.ReadFile(filepath.Join(dir, ".github", "workflows", "pr.yml"))
	if !strings.Contains(string(pr), "@v9.9.9") {
		t.Errorf("pr.yml does not call the reusable workflows at v9.9.9:\n%s", pr)
	}
	if _, err := Write(dir, "v9.9.9"); err == nil || !strings.Contains(err.Error(), "already exists; init repo writes a new repository and overwrites nothing") {
		t.Errorf("a second Write = %v, want a refusal", err)
	}
}
