// Package releaseset reads release sets: meta packages whose requirements
// pin exact builds of other packages, so that a tested stack (foreman,
// pulp, candlepin, smart-proxy) is one verifiable thing.
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
// "+build.N" as the exact build and checks it against the index. Every
// package requirement of a set must pin an exact build.
package releaseset

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"kbuild.dev/kbuild/index"
)

// Member is one exact build a set pins.
type Member struct {
	Package string `json:"package"`
	Version string `json:"version"`
	Build   int    `json:"build"`
}

// String is "name version build N".
func (m Member) String() string { return fmt.Sprintf("%s %s build %d", m.Package, m.Version, m.Build) }

// exact is a requirement version that pins one build: =VERSION+build.N,
// VERSION without build metadata of its own.
var exact = regexp.MustCompile(`^=([0-9A-Za-z.-]+)\+build\.([1-9][0-9]{0,8})$`)

// Constraint returns the requirement version that pins m: "=VERSION+build.N".
func Constraint(m Member) string { return "=" + m.Version + "+build." + strconv.Itoa(m.Build) }

// Members returns the exact builds spec pins, sorted by package, and
// whether spec is a set at all (some package requirement pins an exact
// build). A set whose other package requirements are not exact, or that
// pins one package twice to different builds, is an error naming the
// requirement.
func Members(spec *index.PackageSpec) ([]Member, bool, error) {
	var out []Member
	var loose []string
	for _, v := range spec.Variants {
		for _, r := range v.Requires {
			if r.Package == "" {
				continue
			}
			m := exact.FindStringSubmatch(r.Version)
			if m == nil {
				loose = append(loose, fmt.Sprintf("variant %s requires %s %q", v.Name, r.Package, r.Version))
				continue
			}
			if r.Optional {
				return nil, true, fmt.Errorf("variant %s: %s is optional; a release set pins every member, so drop optional", v.Name, r.Package)
			}
			build, _ := strconv.Atoi(m[2])
			out = append(out, Member{Package: r.Package, Version: m[1], Build: build})
		}
	}
	if len(out) == 0 {
		return nil, false, nil
	}
	if len(loose) > 0 {
		return nil, true, fmt.Errorf("a release set pins exact builds, but %s; write the version as %q", strings.Join(loose, ", "), "=VERSION+build.N")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Package < out[j].Package })
	uniq := out[:0]
	for i, m := range out {
		if i > 0 && out[i-1].Package == m.Package {
			if out[i-1] != m {
				return nil, true, fmt.Errorf("the set pins %s and %s: one build of each package", out[i-1], m)
			}
			continue
		}
		uniq = append(uniq, m)
	}
	return uniq, true, nil
}

// Resolved is a set checked against an index: its members' entries and
// the set digest.
type Resolved struct {
	Set     Member
	Members []ResolvedMember
	// Digest is the set digest (see Digest).
	Digest string
}

// ResolvedMember is a member with its spec digest and entry.
type ResolvedMember struct {
	Member
	Digest string              `json:"digest"`
	Entry  *index.IndexVersion `json:"-"`
}

// Find returns the entry of name version build in x, or nil.
func Find(x *index.RepositoryIndex, name, version string, build int) *index.IndexVersion {
	p := x.Packages[name]
	if p == nil {
		return nil
	}
	for i := range p.Versions {
		if v := &p.Versions[i]; v.Version == version && v.Build == build {
			return v
		}
	}
	return nil
}

// ErrInvalid is wrapped by Resolve's refusals.
var ErrInvalid = errors.New("invalid release set")

// Resolve checks the set name version build against x: it must be in x
// and be a set, every member must be in x (a withdrawn member is named as
// such), and no two members may pin one image (repository) to two
// digests. It returns the members and the set digest.
func Resolve(x *index.RepositoryIndex, name, version string, build int) (*Resolved, error) {
	return ResolveIn(x, "the index", name, version, build)
}

// ResolveIn is Resolve, with where naming x in messages (e.g. "the
// recipes validated and the published index").
func ResolveIn(x *index.RepositoryIndex, where, name, version string, build int) (*Resolved, error) {
	set := Member{Package: name, Version: version, Build: build}
	e := Find(x, name, version, build)
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
		me := Find(x, m.Package, m.Version, m.Build)
		if me == nil {
			why := "is not in " + where
			for _, w := range x.Withdrawn {
				if w.Package == m.Package && w.Version == m.Version && w.Build == m.Build {
					why = "was withdrawn (" + w.Reason + ")"
				}
			}
			missing = append(missing, m.String()+" "+why)
			continue
		}
		r.Members = append(r.Members, ResolvedMember{Member: m, Digest: me.Digest, Entry: me})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s: member %s; publish the member first or pin a build the index has", ErrInvalid, set, strings.Join(missing, "; member "))
	}
	if err := checkImages(r.Members); err != nil {
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

// ImageRepository splits an image reference into its repository (without
// tag) and its digest ("" when not pinned).
func ImageRepository(ref string) (repo, digest string) {
	repo, digest, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return repo, digest
}

// Digest is the set digest of members: "sha256:" and the hex sha256 of the
// compact JSON list of {package, version, build, digest} sorted by
// package, each digest the member's spec digest. It changes when any
// member's content does.
func Digest(members []ResolvedMember) string {
	sorted := append([]ResolvedMember(nil), members...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Package < sorted[j].Package })
	b, _ := json.Marshal(sorted) // strings and ints only: cannot fail
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
