package bump

import (
	"os"
	"path/filepath"
	"testing"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/watch"
)

// TestRepositoryWatchRules: every recipe of this repository but the
// foreman-stack release set carries a watch rule that parses and fits its
// recipe (every pinned source followed or kept, every image rule and
// requirement rule matching).
func TestRepositoryWatchRules(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "recipes", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no recipes: %v", err)
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			_, err := os.Stat(filepath.Join(dir, watch.FileName))
			if name == "foreman-stack" {
				if err == nil {
					t.Errorf("the release set has a watch rule; its pins move with its members' bumps")
				}
				return
			}
			rule, err := watch.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			l, err := builder.Load(dir)
			if err != nil || l.Recipe == nil {
				t.Fatalf("recipe: %v", err)
			}
			if err := rule.Against(filepath.Join(dir, watch.FileName), l.Recipe); err != nil {
				t.Error(err)
			}
		})
	}
}
