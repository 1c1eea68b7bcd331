package suite

import (
	"fmt"
	"slices"
	"strings"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/publish"
)

// checkSetsResolve refuses a promotion that would leave a release set in
// suite unresolvable there, as Debian's testing migration refuses one that
// breaks installability. A kubepkg client reads a set's "=VERSION+build.N"
// as exactly VERSION and installs the newest build of it, so the set only
// resolves while each build it pins is the newest build of that version
// in the suite. target is the suite's index before the promotion (nil
// when it has none); adding are the versions the promotion copies into
// it, from src; sets are checked at their newest build in the suite,
// since an older build of a set is superseded by its newer one.
func checkSetsResolve(suite string, target, src *index.RepositoryIndex, adding []publish.VersionRef) error {
	type key struct{ pkg, version string }
	newest := map[key]int{}
	note := func(pkg, version string, build int) {
		if k := (key{pkg, version}); build > newest[k] {
			newest[k] = build
		}
	}
	sets := map[key]index.SetDigest{}
	noteSet := func(s index.SetDigest) {
		if k := (key{s.Package, s.Version}); s.Build > sets[k].Build {
			sets[k] = s
		}
	}
	if target != nil {
		for name, p := range target.Packages {
			for _, v := range p.Versions {
				note(name, v.Version, v.Build)
			}
		}
		for _, s := range target.Sets {
			noteSet(s)
		}
	}
	for _, v := range adding {
		note(v.Package, v.Version, v.Build)
		for _, s := range src.Sets {
			if s.Package == v.Package && s.Version == v.Version && s.Build == v.Build {
				noteSet(s)
			}
		}
	}
	var broken []string
	for _, s := range sets {
		for _, m := range s.Members {
			if n := newest[key{m.Package, m.Version}]; n > m.Build {
				broken = append(broken, fmt.Sprintf("release set %s %s build %d pins %s, but %s would hold %s %s build %d",
					s.Package, s.Version, s.Build, m, suite, m.Package, m.Version, n))
			}
		}
	}
	if len(broken) == 0 {
		return nil
	}
	slices.Sort(broken)
	return fmt.Errorf("%w: %s; a kubepkg client installs the newest build of a version, so the set would no longer resolve in %s: promote a build of the set that pins the new build instead, which brings its members with it",
		ErrRefused, strings.Join(broken, "; "), suite)
}
