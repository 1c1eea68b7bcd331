package kubepkgclient

// What a kubepkg cluster does with a repository index, encoded for tests:
// which builds its store offers, how its resolver plans 'kubepkg
// install', what that writes on each Package, and what the operator then
// runs, after every index change. It is written from kubepkg's client code (tym83/kubepkg:
// pkg/repo/store.go, pkg/resolve/resolve.go and plan.go, pkg/cli/install.go,
// pkg/controller/repository.go and package_controller.go) and shares no
// code with kbuild's own readers, resolvers or release-set checks, so a
// test can hold those to what a subscriber really does. The rules:
//
//   - Versions order by semver (a leading "v" allowed, as Masterminds'
//     NewVersion reads it), then by build, newest first (repo.Newer).
//   - Constraints are Masterminds semver constraints (resolve.Satisfies):
//     "=3.15.0+build.2" is exactly version 3.15.0, whatever the build, since
//     semver precedence ignores build metadata; "~3.15" is >=3.15.0 <3.16.0;
//     a pre-release satisfies only a constraint that names one.
//   - The resolver sees only the newest build of each version
//     (Store.Catalog); it takes the newest release meeting every
//     constraint on a package and backtracks in that order; a capability is
//     met by a chosen release that provides it, else by pulling in a
//     package whose catalog releases provide it.
//   - install writes one Package per planned package, with spec.version
//     the constraint asked for on the command line, else "~MAJOR.MINOR" of
//     the version planned (cli.defaultConstraint): members of a release
//     set get "~3.15", not the set's pin.
//   - The operator selects, for each Package, the newest version and build
//     of the whole index meeting spec.version (Store.Select), and moves the
//     Package to it whenever its spec digest differs from what runs; when
//     nothing meets spec.version it keeps what runs (selectSource).
//   - A Package is ready only when each requirement of what it runs is met
//     by a running package (resolve.Check): a package requirement by a
//     package whose version meets the constraint, a capability by a running
//     package that provides it.

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Release is one build of a package version in an index.
type Release struct {
	Package  string
	Version  string
	Build    int
	Provides []string
	Requires []Requirement
}

// String is "name version build N".
func (r Release) String() string { return fmt.Sprintf("%s %s build %d", r.Package, r.Version, r.Build) }

// Requirement is one entry of a variant's requires: a package with a
// version constraint, or a capability.
type Requirement struct {
	Package    string
	Capability string
	Version    string
	Optional   bool
}

// Index is one repository index: every build of every package.
type Index struct{ releases map[string][]Release }

// NewIndex returns an index of rs.
func NewIndex(rs ...Release) *Index {
	x := &Index{releases: map[string][]Release{}}
	for _, r := range rs {
		x.releases[r.Package] = append(x.releases[r.Package], r)
	}
	return x
}

// Without returns x without the build name version build: what
// subscribers see once it is withdrawn.
func (x *Index) Without(name, version string, build int) *Index {
	y := &Index{releases: map[string][]Release{}}
	for n, rs := range x.releases {
		for _, r := range rs {
			if n == name && sameVersion(r.Version, version) && r.Build == build {
				continue
			}
			y.releases[n] = append(y.releases[n], r)
		}
	}
	return y
}

// With returns x with rs added: what subscribers see once they are
// published or promoted.
func (x *Index) With(rs ...Release) *Index {
	y := &Index{releases: map[string][]Release{}}
	for n, v := range x.releases {
		y.releases[n] = slices.Clone(v)
	}
	for _, r := range rs {
		y.releases[r.Package] = append(y.releases[r.Package], r)
	}
	return y
}

func parse(v string) (*semver.Version, error) { return semver.NewVersion(v) }

func sameVersion(a, b string) bool {
	va, ea := parse(a)
	vb, eb := parse(b)
	if ea != nil || eb != nil {
		return a == b
	}
	return va.Equal(vb) && va.Metadata() == vb.Metadata()
}

// newer orders releases by version, then build, highest first.
func newer(a, b Release) bool {
	va, ea := parse(a.Version)
	vb, eb := parse(b.Version)
	if ea == nil && eb == nil && !va.Equal(vb) {
		return va.GreaterThan(vb)
	}
	return a.Build > b.Build
}

// offered returns every build of name, newest first (Store.Offered).
func (x *Index) offered(name string) []Release {
	rs := slices.Clone(x.releases[name])
	sort.SliceStable(rs, func(i, j int) bool { return newer(rs[i], rs[j]) })
	return rs
}

// Catalog returns what the resolver sees of name: the newest build of
// each version, newest first (Store.Catalog).
func (x *Index) Catalog(name string) []Release {
	var out []Release
	for _, r := range x.offered(name) {
		if len(out) > 0 && sameVersion(out[len(out)-1].Version, r.Version) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// Satisfies reports whether version meets constraint as kubepkg checks
// it; an empty constraint accepts anything.
func Satisfies(version, constraint string) bool {
	if strings.TrimSpace(constraint) == "" {
		return true
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return false
	}
	v, err := parse(version)
	if err != nil {
		return false
	}
	return c.Check(v)
}

// Select returns the build the operator runs for a Package of name with
// spec.version constraint: the newest version and build meeting it
// (Store.Select), and false when none does.
func (x *Index) Select(name, constraint string) (Release, bool) {
	for _, r := range x.offered(name) {
		if Satisfies(r.Version, constraint) {
			return r, true
		}
	}
	return Release{}, false
}

// DefaultConstraint is what install writes on a Package asked for without
// a constraint, and on every package pulled in as a requirement:
// "~MAJOR.MINOR" of the version planned.
func DefaultConstraint(version string) string {
	v, err := parse(version)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("~%d.%d", v.Major(), v.Minor())
}

// ErrUnresolvable is returned by Install when no combination of catalog
// releases meets the request.
var ErrUnresolvable = errors.New("requests cannot be satisfied")

type goal struct {
	pkg, constraint, capability, origin string
}

// plan resolves a fresh install of name@constraint against the catalog.
func (x *Index) plan(name, constraint string) (map[string]Release, error) {
	why := ""
	steps := 0
	var solve func(goals []goal, chosen map[string]Release, cons map[string][]string) map[string]Release
	solve = func(goals []goal, chosen map[string]Release, cons map[string][]string) map[string]Release {
		if steps++; steps > 10000 {
			return nil
		}
		if len(goals) == 0 {
			return chosen
		}
		g, rest := goals[0], goals[1:]
		if g.capability != "" {
			for _, n := range sortedKeys(chosen) {
				if provides(chosen[n], g.capability) {
					return solve(rest, chosen, cons)
				}
			}
			var providers []string
			for _, n := range sortedKeys(x.releases) {
				if slices.ContainsFunc(x.Catalog(n), func(r Release) bool { return provides(r, g.capability) }) {
					providers = append(providers, n)
				}
			}
			if len(providers) == 0 {
				why = fmt.Sprintf("nothing provides %s (needed by %s)", g.capability, g.origin)
				return nil
			}
			for _, p := range providers {
				if out := solve(append([]goal{{pkg: p, origin: g.origin}}, rest...), chosen, cons); out != nil {
					return out
				}
			}
			return nil
		}
		next := map[string][]string{}
		for k, v := range cons {
			next[k] = v
		}
		next[g.pkg] = append(slices.Clone(cons[g.pkg]), g.constraint)
		if r, ok := chosen[g.pkg]; ok {
			if !Satisfies(r.Version, g.constraint) {
				why = fmt.Sprintf("%s %s is selected, but %s needs %s", g.pkg, r.Version, g.origin, g.constraint)
				return nil
			}
			return solve(rest, chosen, next)
		}
		var cands []Release
		for _, r := range x.Catalog(g.pkg) {
			if !slices.ContainsFunc(next[g.pkg], func(c string) bool { return !Satisfies(r.Version, c) }) {
				cands = append(cands, r)
			}
		}
		if len(cands) == 0 {
			why = fmt.Sprintf("no release of %s satisfies %s", g.pkg, strings.Join(next[g.pkg], " and "))
			return nil
		}
		for _, r := range cands {
			c := map[string]Release{}
			for k, v := range chosen {
				c[k] = v
			}
			c[r.Package] = r
			var more []goal
			for _, q := range r.Requires {
				if q.Optional {
					continue
				}
				more = append(more, goal{pkg: q.Package, constraint: q.Version, capability: q.Capability, origin: r.Package + " " + r.Version})
			}
			if out := solve(append(more, rest...), c, next); out != nil {
				return out
			}
		}
		return nil
	}
	out := solve([]goal{{pkg: name, constraint: constraint, origin: "requested"}}, map[string]Release{}, map[string][]string{})
	if out == nil {
		if why == "" {
			why = "no candidates"
		}
		return nil, fmt.Errorf("%w: %s", ErrUnresolvable, why)
	}
	return out, nil
}

func provides(r Release, capability string) bool {
	return r.Package == capability || slices.Contains(r.Provides, capability)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Package is one kubepkg Package in a cluster: the constraint install
// wrote on it and the build the operator runs for it.
type Package struct {
	Name string
	// Constraint is the Package's spec.version.
	Constraint string
	// Planned is the build 'kubepkg install' showed in its plan.
	Planned Release
	// Running is the build the operator runs (its PackageSource); ok is
	// false until it selected one.
	Running Release
	ok      bool
}

// Cluster is the Packages of one cluster subscribed to an index.
type Cluster struct {
	Packages map[string]*Package
}

// Install is 'kubepkg install name[@constraint]' on an empty cluster
// subscribed to x, followed by the operator's reconcile: the plan must
// resolve, then each Package runs what the operator selects for it.
func Install(x *Index, name, constraint string) (*Cluster, error) {
	planned, err := x.plan(name, constraint)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Packages: map[string]*Package{}}
	for n, r := range planned {
		p := &Package{Name: n, Planned: r, Constraint: DefaultConstraint(r.Version)}
		if n == name && constraint != "" {
			p.Constraint = constraint
		}
		c.Packages[n] = p
	}
	c.Reconcile(x)
	return c, nil
}

// Reconcile is the operator after an index change: each Package moves to
// the newest build meeting its spec.version, or keeps what it runs when
// none does (a Package that never ran one stays without).
func (c *Cluster) Reconcile(x *Index) {
	for _, n := range sortedKeys(c.Packages) {
		p := c.Packages[n]
		if r, ok := x.Select(n, p.Constraint); ok {
			p.Running, p.ok = r, true
		}
	}
}

// Runs returns the build the cluster runs for name, and whether it runs
// one.
func (c *Cluster) Runs(name string) (Release, bool) {
	p := c.Packages[name]
	if p == nil || !p.ok {
		return Release{}, false
	}
	return p.Running, true
}

// Ready reports whether the Package name is ready, and if not why: each
// non-optional requirement of what it runs must be met by what runs.
func (c *Cluster) Ready(name string) (bool, string) {
	r, ok := c.Runs(name)
	if !ok {
		return false, "no version available"
	}
	var unmet []string
	for _, q := range r.Requires {
		if q.Package != "" {
			m, ok := c.Runs(q.Package)
			switch {
			case !ok && !q.Optional:
				unmet = append(unmet, "package "+q.Package+" not installed")
			case ok && !Satisfies(m.Version, q.Version):
				unmet = append(unmet, fmt.Sprintf("package %s %s: installed version %s does not satisfy %s", q.Package, q.Version, m.Version, q.Version))
			}
			continue
		}
		met := false
		for _, n := range sortedKeys(c.Packages) {
			if m, ok := c.Runs(n); ok && provides(m, q.Capability) {
				met = true
			}
		}
		if !met && !q.Optional {
			unmet = append(unmet, "capability "+q.Capability+": no installed package provides it")
		}
	}
	if len(unmet) > 0 {
		return false, strings.Join(unmet, "; ")
	}
	return true, ""
}
