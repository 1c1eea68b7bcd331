// Package releaseset resolves release sets against an index: meta
// packages whose requirements pin exact builds of other packages, so that
// a tested stack (foreman, pulp, candlepin, smart-proxy) is one verifiable
// thing.
//
// The form is the kubepkg requirement every client already reads:
//
//	requires:
//	  - package: foreman
//	    version: "=3.15.0+build.1"
//
// A kubepkg client resolves the version as a semver constraint: "=" with
// build metadata, which semver precedence ignores, so it accepts exactly
// version 3.15.0 (the suite holds the build the set pins). kbuild reads the
// "+build.N" as the exact build (index.SetMembers) and checks it against
// the index, which lists each whole set with its set digest
// (index.SetDigest).
//
// kubepkg reads neither the build nor the set digest, and plans the
// newest build of the version. A set that also requires each member's
// build capability (BuildCapability), which each member provides, is
// refused by a fresh 'kubepkg install' when the build it would plan is
// not the pinned one; Resolve checks those capabilities agree with the
// pins. Once installed, each member follows ~MAJOR.MINOR on its own
// (Follow, Moves): kbuild keeps the builds it would move to out of a
// suite that holds the set.
package releaseset

import (
	"fmt"
	"slices"
	"strings"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/fault"
	"kbuild.dev/kbuild/spec"
)

// Member is one exact build a set pins.
type Member = index.SetMember

// Members returns the exact builds spec pins (index.SetMembers).
func Members(spec *spec.PackageSpec) ([]Member, bool, error) { return index.SetMembers(spec) }

// Resolved is a set checked against an index: its members' entries and
// the set digest.
type Resolved struct {
	Set     Member
	Members []ResolvedMember
	// Digest is the set digest (index.ComputeSetDigest).
	Digest string
}

// ResolvedMember is a member, with its spec digest, and its entry.
type ResolvedMember struct {
	Member
	Entry *index.IndexVersion
}

// ErrInvalid is wrapped by Resolve's refusals.
var ErrInvalid = fault.New(fault.Refused, "invalid release set")

// Resolve checks the set name version build against x: it must be in x
// and be a set, every member must be in x (a withdrawn member is named as
// such), and no two members may pin one image (repository) to two
// digests. It returns the members and the set digest.
func Resolve(x *index.RepositoryIndex, name, version string, build int) (*Resolved, error) {
	return ResolveIn(x, "the index", name, version, build)
}

// ResolveIn is Resolve, with where naming x in messages (e.g. "the
// recipes validated").
func ResolveIn(x *index.RepositoryIndex, where, name, version string, build int) (*Resolved, error) {
	set := Member{Package: name, Version: version, Build: build}
	e := x.Find(name, version, build)
	if e == nil {
		return nil, fmt.Errorf("%w: %s is not in %s", ErrInvalid, set, where)
	}
	members, isSet, err := Members(&e.Spec)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, set, err)
	}
	if !isSet {
		return nil, fmt.Errorf("%w: %s pins no exact builds; a set's requirements are written %q", ErrInvalid, set, "=VERSION+build.N")
	}
	r := &Resolved{Set: set}
	var missing []string
	for _, m := range members {
		me := x.Find(m.Package, m.Version, m.Build)
		if me == nil {
			why := "is not in " + where
			if w := x.FindWithdrawn(m.Package, m.Version, m.Build); w != nil {
				why = "was withdrawn (" + w.Reason + ")"
			}
			missing = append(missing, m.String()+" "+why)
			continue
		}
		m.Digest = me.Digest
		r.Members = append(r.Members, ResolvedMember{Member: m, Entry: me})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s: member %s; publish the member first or pin a build the index has", ErrInvalid, set, strings.Join(missing, "; member "))
	}
	if err := checkImages(r.Members); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, set, err)
	}
	if err := checkBuildCapabilities(x, &e.Spec, r.Members); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, set, err)
	}
	r.Digest = Digest(r.Members)
	return r, nil
}

// checkImages refuses two members pinning one image repository to two
// digests.
func checkImages(members []ResolvedMember) error {
	type pin struct{ digest, member, ref string }
	seen := map[string]pin{}
	for _, m := range members {
		for _, ref := range m.Entry.Spec.Images {
			repo, digest := ImageRepository(ref)
			if digest == "" {
				continue
			}
			if p, ok := seen[repo]; ok && p.digest != digest {
				return fmt.Errorf("image %s is pinned to two digests: %s by %s (%s) and %s by %s (%s); members of a set must run one build of each image",
					repo, p.digest, p.member, p.ref, digest, m.Member, ref)
			}
			seen[repo] = pin{digest, m.Member.String(), ref}
		}
	}
	return nil
}

// BuildCapabilityPrefix begins a build capability (BuildCapability).
const BuildCapabilityPrefix = "build:"

// BuildCapability is the capability that names one exact build,
// "build:NAME@VERSION+build.N". A member provides its own; a set that
// requires it of each member makes kubepkg, which resolves a requirement's
// version against spec.version alone and installs the newest build of a
// version, refuse the set rather than run a build the set does not pin:
// kubepkg meets a capability only with a release that provides it.
func BuildCapability(name, version string, build int) string {
	return BuildCapabilityPrefix + name + "@" + strings.TrimPrefix(index.ExactBuild(version, build), "=")
}

// checkBuildCapabilities checks the build capabilities of a set: each one
// the set requires names a member pin and that member provides it; when
// the set requires any, it requires one of every member; and no build of a
// member package in x provides another build's capability (a provides
// entry left behind when a recipe's build was bumped would let kubepkg
// take that build for the pinned one).
func checkBuildCapabilities(x *index.RepositoryIndex, set *spec.PackageSpec, members []ResolvedMember) error {
	required := map[string]bool{}
	for _, v := range set.Variants {
		for _, r := range v.Requires {
			if strings.HasPrefix(r.Capability, BuildCapabilityPrefix) {
				required[r.Capability] = true
			}
		}
	}
	if len(required) == 0 {
		return nil
	}
	pinned := map[string]bool{}
	var missing []string
	for _, m := range members {
		c := BuildCapability(m.Package, m.Version, m.Build)
		pinned[c] = true
		if !required[c] {
			missing = append(missing, fmt.Sprintf("{capability: %q}", c))
		} else if !slices.Contains(m.Entry.Spec.Provides, c) {
			return fmt.Errorf("requires capability %s, which member %s does not provide; add %q to spec.package.provides of its recipe", c, m.Member, c)
		}
		if p, ok := x.Packages[m.Package]; ok {
			for _, v := range p.Versions {
				for _, other := range v.Spec.Provides {
					if own := BuildCapability(m.Package, v.Version, v.Build); strings.HasPrefix(other, BuildCapabilityPrefix+m.Package+"@") && other != own {
						return fmt.Errorf("%s %s build %d provides %s, another build's capability; a build provides only its own, %s", m.Package, v.Version, v.Build, other, own)
					}
				}
			}
		}
	}
	for c := range required {
		if !pinned[c] {
			return fmt.Errorf("requires capability %s, which names no build the set pins", c)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("requires build capabilities of some members but not of all; add %s to its requires", strings.Join(missing, ", "))
	}
	return nil
}

// ImageRepository splits an image reference into its repository,
// registry/repository without the tag as spec.ParseImageRef reads it, and
// its digest ("" when not pinned). A reference that does not parse is its
// own repository, unpinned.
func ImageRepository(ref string) (repo, digest string) {
	r, err := spec.ParseImageRef(ref)
	if err != nil {
		return ref, ""
	}
	return r.Name(), r.Digest
}

// Digest is the set digest of members (index.ComputeSetDigest).
func Digest(members []ResolvedMember) string {
	ms := make([]Member, len(members))
	for i, m := range members {
		ms[i] = m.Member
	}
	return index.ComputeSetDigest(ms)
}
