package index

import (
	"encoding/json"
	"fmt"
	"kbuild.dev/kbuild/spec"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A release set is a version whose package requirements pin exact builds
// of other packages, each written "=VERSION+build.N" (a semver
// constraint kubepkg reads as exactly VERSION; kbuild reads the build).
// The index lists every set it holds whole under "sets:", beside
// "packages:", with the set digest: the sha256 of the compact JSON of its
// members' {package, version, build, digest}, sorted by package, each
// digest the member's spec digest. So a set is one verifiable thing: the
// digest changes when any member's content does. kubepkg's reader, which
// decodes the index leniently, ignores the key; the signature covers it.

// SetDigest is one release set of the index.
type SetDigest struct {
	Build int `json:"build"`
	// Digest is the set digest of Members.
	Digest  string      `json:"digest"`
	Members []SetMember `json:"members"`
	Package string      `json:"package"`
	Version string      `json:"version"`
}

// SetMember is one exact build a set pins, with its spec digest (empty
// where it is not known yet, as in a recipe).
type SetMember struct {
	Build   int    `json:"build"`
	Digest  string `json:"digest,omitempty"`
	Package string `json:"package"`
	Version string `json:"version"`
}

// String is "name version build N".
func (m SetMember) String() string {
	return fmt.Sprintf("%s %s build %d", m.Package, m.Version, m.Build)
}

// exactBuild is a requirement version that pins one build.
var exactBuild = regexp.MustCompile(`^=([0-9A-Za-z.-]+)\+build\.([1-9][0-9]{0,8})$`)

// ExactBuild returns the requirement version that pins version build:
// "=VERSION+build.N".
func ExactBuild(version string, build int) string {
	return "=" + version + "+build." + strconv.Itoa(build)
}

// SetMembers returns the exact builds spec pins, sorted by package, and
// whether spec is a set at all (some package requirement pins an exact
// build). A set whose other package requirements are not exact, with an
// optional member, or pinning one package to two builds is an error.
func SetMembers(ps *spec.PackageSpec) ([]SetMember, bool, error) {
	var out []SetMember
	var loose []string
	for _, v := range ps.Variants {
		for _, r := range v.Requires {
			if r.Package == "" {
				continue
			}
			m := exactBuild.FindStringSubmatch(r.Version)
			if m == nil {
				loose = append(loose, fmt.Sprintf("variant %s requires %s %q", v.Name, r.Package, r.Version))
				continue
			}
			if r.Optional {
				return nil, true, fmt.Errorf("variant %s: %s is optional; a release set pins every member, so drop optional", v.Name, r.Package)
			}
			build, _ := strconv.Atoi(m[2])
			out = append(out, SetMember{Package: r.Package, Version: spec.CanonicalVersion(m[1]), Build: build})
		}
	}
	if len(out) == 0 {
		return nil, false, nil
	}
	if len(loose) > 0 {
		return nil, true, fmt.Errorf("a release set pins exact builds, but %s; write the version as %q", strings.Join(loose, ", "), "=VERSION+build.N")
	}
	slices.SortStableFunc(out, func(a, b SetMember) int { return strings.Compare(a.Package, b.Package) })
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

// ComputeSetDigest returns the set digest of members (see SetDigest).
func ComputeSetDigest(members []SetMember) string {
	sorted := slices.Clone(members)
	slices.SortFunc(sorted, func(a, b SetMember) int { return strings.Compare(a.Package, b.Package) })
	type m struct {
		Package string `json:"package"`
		Version string `json:"version"`
		Build   int    `json:"build"`
		Digest  string `json:"digest"`
	}
	list := make([]m, len(sorted))
	for i, s := range sorted {
		list[i] = m{s.Package, s.Version, s.Build, s.Digest}
	}
	b, _ := json.Marshal(list) // strings and ints: cannot fail
	return spec.DigestOf(b)
}

// writeSets writes "sets:" and its list, from the start of a line.
func writeSets(w *ywriter, list []SetDigest) {
	if len(list) == 0 {
		return
	}
	w.Key(0, "sets")
	for i := range list {
		s := &list[i]
		w.Item(0)
		w.Mapping(2, func(col int) {
			w.Key(col, "build")
			w.Int(s.Build)
			w.FieldStr(col, "digest", s.Digest)
			w.Key(col, "members")
			for j := range s.Members {
				m := &s.Members[j]
				w.Item(col)
				w.Mapping(col+2, func(col int) {
					w.Key(col, "build")
					w.Int(m.Build)
					w.FieldStr(col, "digest", m.Digest)
					w.FieldStr(col, "package", m.Package)
					w.FieldStr(col, "version", m.Version)
				})
			}
			w.FieldStr(col, "package", s.Package)
			w.FieldStr(col, "version", s.Version)
		})
	}
}

func readSets(r *yreader) ([]SetDigest, error) {
	var out []SetDigest
	_, err := r.ReadSeq(func() error {
		out = append(out, SetDigest{})
		s := &out[len(out)-1]
		_, err := r.ReadMap(func(k string) error {
			var err error
			switch k {
			case "build":
				s.Build, err = r.ReadInt(k)
			case "digest":
				s.Digest, err = r.ReadString(k)
			case "package":
				s.Package, err = r.ReadString(k)
			case "version":
				s.Version, err = r.ReadString(k)
			case "members":
				_, err = r.ReadSeq(func() error {
					s.Members = append(s.Members, SetMember{})
					m := &s.Members[len(s.Members)-1]
					_, err := r.ReadMap(func(k string) error {
						var err error
						switch k {
						case "build":
							m.Build, err = r.ReadInt(k)
						case "digest":
							m.Digest, err = r.ReadString(k)
						case "package":
							m.Package, err = r.ReadString(k)
						case "version":
							m.Version, err = r.ReadString(k)
						default:
							err = r.unknown("sets members", k)
						}
						return err
					})
					return err
				})
			default:
				err = r.unknown("sets", k)
			}
			return err
		})
		return err
	})
	return out, err
}

// Find returns the entry of name version build in x, or nil. version is
// compared as a version (spec.SameVersion): "v0.2.2" finds "0.2.2".
func (x *RepositoryIndex) Find(name, version string, build int) *IndexVersion {
	p := x.Packages[name]
	if p == nil {
		return nil
	}
	for i := range p.Versions {
		if v := &p.Versions[i]; v.Build == build && spec.SameVersion(v.Version, version) {
			return v
		}
	}
	return nil
}

// CheckSets checks the sets of x: sorted, each once, and — when all
// packages were kept — each a set of x whose members x holds with the
// digests listed, the digest their set digest.
func (x *RepositoryIndex) CheckSets(all bool) error {
	for i, s := range x.Sets {
		set := SetMember{Package: s.Package, Version: s.Version, Build: s.Build}
		if err := checkDigest(s.Digest); err != nil {
			return fmt.Errorf("sets: %s: %w", set, err)
		}
		if i > 0 {
			p := x.Sets[i-1]
			if c := strings.Compare(p.Package, s.Package); c > 0 || c == 0 && (p.Version > s.Version || p.Version == s.Version && p.Build >= s.Build) {
				return fmt.Errorf("sets: %s is out of order or listed twice", set)
			}
		}
		if got := ComputeSetDigest(s.Members); got != s.Digest {
			return fmt.Errorf("sets: %s has digest %s, but its members' digests give %s", set, s.Digest, got)
		}
		if !all {
			continue
		}
		e := x.Find(s.Package, s.Version, s.Build)
		if e == nil {
			return fmt.Errorf("sets: %s is not among the packages", set)
		}
		want, _, err := SetMembers(&e.Spec)
		if err != nil {
			return fmt.Errorf("sets: %s: %w", set, err)
		}
		if len(want) != len(s.Members) {
			return fmt.Errorf("sets: %s lists %d members, its spec pins %d", set, len(s.Members), len(want))
		}
		for j, m := range s.Members {
			if w := want[j]; w.Package != m.Package || !spec.SameVersion(w.Version, m.Version) || w.Build != m.Build {
				return fmt.Errorf("sets: %s lists member %s where its spec pins %s", set, m, w)
			}
			me := x.Find(m.Package, m.Version, m.Build)
			if me == nil {
				return fmt.Errorf("sets: %s: member %s is not among the packages", set, m)
			}
			if me.Digest != m.Digest {
				return fmt.Errorf("sets: %s: member %s has digest %s in the index, %s in the set", set, m, me.Digest, m.Digest)
			}
		}
	}
	return nil
}

// sets returns the release sets among the versions vs of the packages
// names (as sorted returns them) whose members b holds, with their
// digests: a set missing a member (not published yet, or withdrawn) is
// not whole and is not listed. b.mu is held.
func (b *Builder) sets(names []string, vs map[string][]*builtVersion) []SetDigest {
	var out []SetDigest
	for _, name := range names {
		for _, bv := range vs[name] {
			if bv.set == nil {
				continue
			}
			s := SetDigest{Package: name, Version: bv.v.Version, Build: bv.v.Build, Members: make([]SetMember, len(bv.set))}
			whole := true
			for i, m := range bv.set {
				s.Members[i] = m
				p := b.pkgs[m.Package]
				var mv *builtVersion
				if p != nil {
					mv = p.versions[versionKey{m.Version, m.Build}]
				}
				if mv == nil {
					whole = false
					break
				}
				s.Members[i].Digest = mv.v.Digest
			}
			if whole {
				s.Digest = ComputeSetDigest(s.Members)
				out = append(out, s)
			}
		}
	}
	slices.SortFunc(out, func(a, c SetDigest) int {
		if d := strings.Compare(a.Package, c.Package); d != 0 {
			return d
		}
		if a.Version != c.Version {
			return strings.Compare(a.Version, c.Version)
		}
		return a.Build - c.Build
	})
	return out
}
