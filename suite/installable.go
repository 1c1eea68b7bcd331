package suite

import (
	"fmt"
	"strings"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/releaseset"
)

// checkSetsFollow refuses a promotion after which kubepkg would move a
// member of a release set in suite off the build the set pins, as
// Debian's testing migration refuses one that breaks installability.
// 'kubepkg install' writes spec.version "~MAJOR.MINOR" on each member, and
// the operator runs the newest build meeting it (releaseset.Moves): a
// newer build of the pinned version, or a newer patch release, in the
// suite is what clusters running the set would run. target is the
// suite's index before the promotion (nil when it has none); adding are
// the versions the promotion copies into it, from src. Only the moves
// the promotion would cause are refused.
func checkSetsFollow(suite string, target, src *index.RepositoryIndex, adding []publish.VersionRef) error {
	before := &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{}}
	after := &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{}}
	if target != nil {
		for name, p := range target.Packages {
			before.Packages[name] = &index.IndexPackage{Versions: p.Versions}
			after.Packages[name] = &index.IndexPackage{Versions: append([]index.IndexVersion(nil), p.Versions...)}
		}
	}
	for _, v := range adding {
		e := src.Find(v.Package, v.Version, v.Build)
		if e == nil || after.Find(v.Package, v.Version, v.Build) != nil {
			continue
		}
		p := after.Packages[v.Package]
		if p == nil {
			p = &index.IndexPackage{}
			after.Packages[v.Package] = p
		}
		p.Versions = append(p.Versions, *e)
	}
	had := map[string]bool{}
	for _, m := range releaseset.Moves(before) {
		had[m.String()] = true
	}
	var moves, sets []string
	for _, m := range releaseset.Moves(after) {
		if !had[m.String()] {
			moves = append(moves, m.String())
			sets = append(sets, fmt.Sprintf("a build of %s that pins %s %s build %d", m.Set.Package, m.Member.Package, m.To.Version, m.To.Build))
		}
	}
	if len(moves) == 0 {
		return nil
	}
	return fmt.Errorf("%w: in %s, %s; 'kubepkg install' writes spec.version ~MAJOR.MINOR on each member and the operator runs the newest build meeting it, so clusters running the set, and fresh installs of it, would run a combination it does not pin (only the set's own Package goes unready): promote %s instead, which brings its members with it",
		ErrRefused, suite, strings.Join(moves, "; "), strings.Join(sets, ", "))
}
