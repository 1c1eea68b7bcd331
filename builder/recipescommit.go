package builder

import (
	"os/exec"
	"regexp"
	"strings"
)

var commitID = regexp.MustCompile(`^[0-9a-f]{40}$`)

// RecipesCommit returns the commit checked out in the git repository of
// the recipes directory dir, for WithCommit: "" when dir is "", is not in
// a git work tree, or has uncommitted changes below it (the build would
// then not be that commit's).
func RecipesCommit(dir string) string {
	if dir == "" {
		return ""
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if !commitID.MatchString(c) {
		return ""
	}
	if st, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--", ".").Output(); err != nil || len(st) > 0 {
		return ""
	}
	return c
}
