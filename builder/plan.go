package builder

import (
	"path/filepath"
	"strings"

	"kbuild.dev/kbuild/index"
)

// Plan is what kbuild plan prints with --format json: the recipes to build,
// split into shards, and those already published. Lists are never null, so
// that fromJSON(...) in a workflow always sees arrays.
type Plan struct {
	Shards   []Shard  `json:"shards"`
	UpToDate []string `json:"upToDate"`
}

// Shard is one job of a build matrix.
type Shard struct {
	Index   int      `json:"index"`
	Recipes []string `json:"recipes"`
}

// PlanBuilds sorts the recipe directories dirs (slash-separated in the
// plan) into those whose version and build published already holds (none
// when published is nil) and those to build, dealt round-robin into at
// most n non-empty shards. A recipe that does not decode is planned for
// building, which reports why, and warnf (when not nil) is told.
func PlanBuilds(dirs []string, published *index.RepositoryIndex, n int, warnf func(format string, args ...any)) (*Plan, error) {
	var build, upToDate []string
	for _, d := range dirs {
		l, err := Load(d)
		if err != nil {
			return nil, err
		}
		slash := filepath.ToSlash(d)
		if l.Recipe == nil {
			if warnf != nil {
				warnf("warning: recipe %s does not decode; planned for building, which reports why", slash)
			}
			build = append(build, slash)
			continue
		}
		r := l.Recipe
		if published != nil && published.Find(r.Metadata.Name, strings.TrimPrefix(r.Spec.Version, "v"), r.Spec.Build) != nil {
			upToDate = append(upToDate, slash)
		} else {
			build = append(build, slash)
		}
	}
	return planShards(build, upToDate, n), nil
}

// planShards deals the sorted recipes to build round-robin into at most n
// non-empty shards.
func planShards(build, upToDate []string, n int) *Plan {
	p := &Plan{Shards: []Shard{}, UpToDate: append([]string{}, upToDate...)}
	count := min(n, len(build))
	for i := range count {
		p.Shards = append(p.Shards, Shard{Index: i, Recipes: []string{}})
	}
	for i, r := range build {
		s := &p.Shards[i%count]
		s.Recipes = append(s.Recipes, r)
	}
	return p
}
