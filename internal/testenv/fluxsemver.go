package testenv

import (
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// FluxSemver picks the tag Flux's source-controller picks for an
// OCIRepository with ref.semver: constraint over the Helm chart tags of a
// repository. An independent encoding of its rules (getTagBySemver in
// internal/controller/ocirepository_controller.go, v1.10, and
// fluxcd/pkg/version.ParseVersion): '_' in a tag reads as '+'; a tag
// that is not three dot-separated parts or not semver is skipped; the
// highest match wins; no match is an error.
func FluxSemver(tags []string, constraint string) (string, error) {
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return "", err
	}
	var match []*semver.Version
	for _, tag := range tags {
		s := strings.ReplaceAll(tag, "_", "+")
		if len(strings.SplitN(s, ".", 3)) != 3 {
			continue
		}
		v, err := semver.NewVersion(s)
		if err != nil {
			continue
		}
		if c.Check(v) {
			match = append(match, v)
		}
	}
	if len(match) == 0 {
		return "", fmt.Errorf("no match found for semver: %s", constraint)
	}
	sort.Sort(sort.Reverse(semver.Collection(match)))
	return strings.ReplaceAll(match[0].Original(), "+", "_"), nil
}
