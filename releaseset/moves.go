package releaseset

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// What a kubepkg cluster does with a release set (tym83/kubepkg:
// cli/install.go, repo/store.go, controller/repository.go): 'kubepkg
// install SET' resolves the set against the newest build of each version,
// then writes one Package per package planned, the set and each member,
// with spec.version "~MAJOR.MINOR" of the version planned (Follow), not
// the set's pin. The operator then runs, for each Package, the newest
// version and build in the index meeting its spec.version, and moves it
// whenever that changes. So a member follows newer builds and patch
// releases on its own, whatever the set pins; only the set's own Package
// notices (not ready: its requirement is no longer met).

// Follow is the spec.version 'kubepkg install' writes on a Package it
// plans at version without a constraint, members of a set included:
// "~MAJOR.MINOR" ("" for a version that does not parse).
func Follow(version string) string {
	v, err := spec.ParseVersion(version)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("~%d.%d", v.Major(), v.Minor())
}

// Selects returns the entry of name in x that a kubepkg operator runs for
// a Package with spec.version constraint: the newest version and build
// meeting it, as kubepkg checks constraints (Masterminds semver; a
// pre-release meets only a constraint naming one; "" meets any). It returns nil when
// none does; the operator then keeps what it runs.
func Selects(x *index.RepositoryIndex, name, constraint string) *index.IndexVersion {
	p := x.Packages[name]
	if p == nil {
		return nil
	}
	vs := slices.Clone(p.Versions)
	index.SortNewestFirst(vs)
	if strings.TrimSpace(constraint) == "" { // kubepkg: any version
		if len(vs) == 0 {
			return nil
		}
		return x.Find(name, vs[0].Version, vs[0].Build)
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return nil
	}
	for i := range vs {
		if sv, err := spec.ParseVersion(vs[i].Version); err == nil && c.Check(sv) {
			return x.Find(name, vs[i].Version, vs[i].Build)
		}
	}
	return nil
}

// Move is a member of a release set that kubepkg moves off the build the
// set pins: clusters that installed the set run To instead.
type Move struct {
	Set    Member
	Member Member
	To     *index.IndexVersion
}

// String names the set, the pinned build and the build members move to.
func (m Move) String() string {
	return fmt.Sprintf("release set %s pins %s, but members installed with it (spec.version %q) move to %s %s build %d",
		m.Set, m.Member, Follow(m.Member.Version), m.Member.Package, m.To.Version, m.To.Build)
}

// Moves returns every member that kubepkg would move off its pin, in the
// release sets of x that subscribers still run: a set whose own newest
// build meeting Follow of its version is itself (an older set is
// superseded, and its subscribers move to the newer one). A member moves
// when the newest build of its package meeting Follow of the pinned
// version is another build: a newer build of the version, or a newer
// patch release. Sorted by set, then member.
func Moves(x *index.RepositoryIndex) []Move {
	var out []Move
	for _, name := range slices.Sorted(maps.Keys(x.Packages)) {
		for i := range x.Packages[name].Versions {
			e := &x.Packages[name].Versions[i]
			members, isSet, err := Members(&e.Spec)
			if err != nil || !isSet {
				continue
			}
			if cur := Selects(x, name, Follow(e.Version)); cur == nil || cur.Build != e.Build || cur.Version != e.Version {
				continue
			}
			set := Member{Package: name, Version: e.Version, Build: e.Build}
			for _, m := range members {
				to := Selects(x, m.Package, Follow(m.Version))
				if to != nil && (to.Build != m.Build || !spec.SameVersion(to.Version, m.Version)) {
					out = append(out, Move{Set: set, Member: m, To: to})
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Move) int {
		return strings.Compare(a.Set.String()+"\x00"+a.Member.Package, b.Set.String()+"\x00"+b.Member.Package)
	})
	return out
}

// Follower is what one kubepkg Package running a withdrawn build does:
// with spec.version Constraint, the operator moves it to To, or keeps
// running the withdrawn build when To is nil (nothing left meets the
// constraint; the charts stay in the registry).
type Follower struct {
	Constraint string
	To         *index.IndexVersion
}

// AfterWithdrawal returns what clusters running a withdrawn build of name
// at version do once x (the index after the withdrawal) is what they see:
// for a Package with spec.version Follow(version), as 'kubepkg install'
// writes it, and for one with "=version", as a release set pins it or an
// install asked for exactly that version, the build the operator moves it
// to — the newest left meeting the constraint, another build of the
// version or another patch release, older or newer — or none.
func AfterWithdrawal(x *index.RepositoryIndex, name, version string) []Follower {
	var out []Follower
	for _, c := range []string{Follow(version), "=" + spec.CanonicalVersion(version)} {
		if c == "" || c == "=" {
			continue
		}
		out = append(out, Follower{Constraint: c, To: Selects(x, name, c)})
	}
	return out
}
