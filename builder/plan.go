package builder

import (
	"errors"
	"fmt"
	"path/filepath"

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
// building, which reports why, and warnf (when not nil) is told. A recipe
// whose version and build are published with another spec (SpecChange) is
// an error: it is neither up to date nor buildable under that build.
func PlanBuilds(dirs []string, published *index.RepositoryIndex, n int, warnf func(format string, args ...any)) (*Plan, error) {
	var build, upToDate []string
	var changed []error
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
		if pub := findPublished(published, r.Metadata.Name, r.Spec.Version, r.Spec.Build); pub != nil {
			if err := SpecChange(r, pub); err != nil {
				changed = append(changed, fmt.Errorf("recipe %s: %w", slash, err))
				continue
			}
			upToDate = append(upToDate, slash)
		} else {
			build = append(build, slash)
		}
	}
	if len(changed) > 0 {
		return nil, errors.Join(changed...)
	}
	return planShards(build, upToDate, n), nil
}

// findPublished returns the entry of name version build in published
// (nil when published is nil or lacks it).
func findPublished(published *index.RepositoryIndex, name, version string, build int) *index.IndexVersion {
	if published == nil {
		return nil
	}
	return published.Find(name, version, build)
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
