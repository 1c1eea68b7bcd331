package bump

import (
	"context"
	"path/filepath"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/watch"
)

// Outdated loads the recipes in dirs and their watch rules and checks
// every upstream with l, at most jobs look-ups at once (watch.Check). A
// recipe that does not load, or has no watch rule, gets a report with its
// error; the others are checked regardless.
func Outdated(ctx context.Context, l *watch.Looker, dirs []string, jobs int) []watch.Report {
	targets := make([]watch.Target, len(dirs))
	for i, dir := range dirs {
		t := watch.Target{Dir: dir}
		ld, err := builder.Load(dir)
		switch {
		case err != nil:
			t.Err = err
		case ld.Recipe == nil:
			t.Err = ld.Err()
		default:
			t.Recipe = ld.Recipe
			if t.Rule, t.Err = watch.Load(dir); t.Err == nil {
				t.Err = t.Rule.Against(filepath.Join(dir, watch.FileName), t.Recipe)
			}
		}
		targets[i] = t
	}
	return watch.Check(ctx, l, targets, jobs)
}
