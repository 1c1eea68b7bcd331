package bundle

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// Want is a package asked for: a name and a semver constraint (empty for
// the newest version).
type Want struct {
	Name       string
	Constraint string
}

// ParseWant parses NAME or NAME@CONSTRAINT ("kubevirt@~1.9").
func ParseWant(s string) (Want, error) {
	name, c, _ := strings.Cut(s, "@")
	if err := index.CheckPackageName(name); err != nil {
		return Want{}, fmt.Errorf("package %q: %w", s, err)
	}
	if c != "" {
		if _, err := semver.NewConstraint(c); err != nil {
			return Want{}, fmt.Errorf("package %q: version constraint %q: %w", s, c, err)
		}
	}
	return Want{Name: name, Constraint: c}, nil
}

// ParseWants parses each of args as ParseWant does, stopping at the first
// that does not parse.
func ParseWants(args []string) ([]Want, error) {
	var wants []Want
	for _, a := range args {
		w, err := ParseWant(a)
		if err != nil {
			return nil, err
		}
		wants = append(wants, w)
	}
	return wants, nil
}

// Selected is a version chosen for the bundle.
type Selected struct {
	Name    string
	Version index.IndexVersion
	// Reason is "requested" or "required by NAME VERSION".
	Reason string
}

// Resolution is the outcome of Resolve.
type Resolution struct {
	// Packages are sorted by name.
	Packages []Selected
	// Notes are requirements left to the cluster: API capabilities no
	// package provides, optional packages the index does not have.
	Notes []string
}

// Resolve chooses, for every wanted package and everything its versions
// require (every variant's requires and dependsOn, meta packages
// included), the newest version in x that satisfies every constraint on
// that package, as kubepkg does: the highest acceptable version of each
// package, no search for clever combinations. A capability is met by a
// chosen package that provides it, else by the first package (by name)
// whose newest version provides it; an api: capability nothing provides is
// left to the cluster's API server. Optional requirements are included
// when the index can meet them, since an air-gapped cluster cannot fetch
// them later.
func Resolve(x *index.RepositoryIndex, wants []Want) (*Resolution, error) {
	if len(wants) == 0 {
		return nil, fmt.Errorf("no packages asked for")
	}
	var chosen map[string]Selected
	for round := 0; ; round++ {
		if round > 100 {
			return nil, fmt.Errorf("requirements do not settle after 100 rounds; the index has requirements that keep changing each other's versions")
		}
		cons := map[string][]constraint{}
		var order []string
		add := func(name, expr, from string) {
			if _, ok := cons[name]; !ok {
				order = append(order, name)
			}
			cons[name] = append(cons[name], constraint{expr, from})
		}
		for _, w := range wants {
			add(w.Name, w.Constraint, "requested")
		}
		var notes []string
		// Requirements of the versions chosen so far, in name order.
		names := slices.Sorted(maps.Keys(chosen))
		// provided returns the first chosen package providing capability.
		provided := func(capability string) string {
			for _, n := range names {
				s := chosen[n]
				if s.Name == capability || slices.Contains(s.Version.Spec.Provides, capability) {
					return n
				}
			}
			return ""
		}
		for _, n := range names {
			s := chosen[n]
			from := fmt.Sprintf("required by %s %s", s.Name, s.Version.Version)
			for _, va := range s.Version.Spec.Variants {
				for _, d := range va.DependsOn {
					add(d, "", from)
				}
				for _, r := range va.Requires {
					switch {
					case r.Package != "":
						if r.Optional && !satisfiable(x, r.Package, r.Version) {
							notes = append(notes, fmt.Sprintf("%s %s: optional package %s %s is not in the index; left out", s.Name, s.Version.Version, r.Package, r.Version))
							continue
						}
						add(r.Package, r.Version, from)
					case r.Capability != "":
						if p := provided(r.Capability); p != "" {
							add(p, "", from+" (capability "+r.Capability+")") // keeps the provider chosen
							continue
						}
						if p := provider(x, r.Capability); p != "" {
							add(p, "", from+" (capability "+r.Capability+")")
							continue
						}
						if strings.HasPrefix(r.Capability, "api:") || r.Optional {
							notes = append(notes, fmt.Sprintf("%s %s: capability %s is provided by no package in the index; the cluster must serve it", s.Name, s.Version.Version, r.Capability))
							continue
						}
						return nil, fmt.Errorf("%s %s variant %s requires capability %s, which no package in the index provides", s.Name, s.Version.Version, va.Name, r.Capability)
					}
				}
			}
		}
		next := map[string]Selected{}
		for _, name := range order {
			p := x.Packages[name]
			cs := cons[name]
			if p == nil || len(p.Versions) == 0 {
				return nil, fmt.Errorf("package %s (%s) is not in the index", name, cs[0].from)
			}
			v, err := newest(p, cs)
			if err != nil {
				return nil, fmt.Errorf("package %s: %w", name, err)
			}
			next[name] = Selected{Name: name, Version: v, Reason: reason(cs)}
		}
		if same(chosen, next) {
			res := &Resolution{Notes: dedupe(notes)}
			for _, n := range slices.Sorted(maps.Keys(next)) {
				res.Packages = append(res.Packages, next[n])
			}
			return res, nil
		}
		chosen = next
	}
}

// constraint is a semver constraint on a package and where it came from.
type constraint struct{ expr, from string }

// newest returns the newest version of p satisfying every constraint.
func newest(p *index.IndexPackage, cs []constraint) (index.IndexVersion, error) {
	var parsed []*semver.Constraints
	var desc []string
	for _, c := range cs {
		if c.expr == "" {
			continue
		}
		pc, err := semver.NewConstraint(c.expr)
		if err != nil {
			return index.IndexVersion{}, fmt.Errorf("version constraint %q (%s): %w", c.expr, c.from, err)
		}
		parsed = append(parsed, pc)
		desc = append(desc, fmt.Sprintf("%s (%s)", c.expr, c.from))
	}
	for _, v := range p.Versions { // newest first
		sv, err := spec.ParseVersion(v.Version) // "v1.2.3" is 1.2.3, as kubepkg reads it
		if err != nil {
			continue
		}
		ok := true
		for _, pc := range parsed {
			ok = ok && pc.Check(sv)
		}
		if ok {
			return v, nil
		}
	}
	var have []string
	for _, v := range p.Versions {
		have = append(have, v.Version)
	}
	return index.IndexVersion{}, fmt.Errorf("no version satisfies %s; the index has %s", strings.Join(desc, " and "), strings.Join(dedupe(have), ", "))
}

// reason says why a package is in: "requested", or every package that
// requires it, sorted.
func reason(cs []constraint) string {
	var by []string
	for _, c := range cs {
		if c.from == "requested" {
			return c.from
		}
		by = append(by, strings.TrimPrefix(c.from, "required by "))
	}
	slices.Sort(by)
	return "required by " + strings.Join(slices.Compact(by), ", ")
}

func satisfiable(x *index.RepositoryIndex, name, expr string) bool {
	p := x.Packages[name]
	if p == nil {
		return false
	}
	_, err := newest(p, []constraint{{expr, ""}})
	return err == nil
}

// provider returns the first package, by name, whose newest version
// provides capability.
func provider(x *index.RepositoryIndex, capability string) string {
	for _, n := range slices.Sorted(maps.Keys(x.Packages)) {
		p := x.Packages[n]
		if len(p.Versions) > 0 && slices.Contains(p.Versions[0].Spec.Provides, capability) {
			return n
		}
	}
	return ""
}

func same(a, b map[string]Selected) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !spec.SameVersion(w.Version.Version, v.Version.Version) || w.Version.Build != v.Version.Build {
			return false
		}
	}
	return true
}

func dedupe(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
