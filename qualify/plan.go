package qualify

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// Plan is what a qualification installs, in the order it installs it:
// every package build (the target, a release set's members, and what
// their requirements pull in) and every Helm release of their variants.
type Plan struct {
	Target evidence.Target
	// Set says the target is a release set: Packages hold its members at
	// the exact builds it pins.
	Set bool
	// Packages are in install order: a package after everything it
	// requires.
	Packages []PackageBuild
	// Releases are the components of Packages, in install order.
	Releases []Release
	// PreUpgrade are the components of phase PreUpgrade: on an upgrade
	// from another version they run first, and are removed after it.
	PreUpgrade []Release
}

// PackageBuild is one build of one package the plan installs.
type PackageBuild struct {
	Name    string
	Version string
	Build   int
	Spec    *spec.PackageSpec
	Variant string
	// Why says why the plan holds it: "requested", "member of SET", or
	// "required by NAME VERSION".
	Why string
}

// String is "name version build N".
func (p PackageBuild) String() string {
	return fmt.Sprintf("%s %s build %d", p.Name, p.Version, p.Build)
}

// Release is one Helm release: one component of one package build.
type Release struct {
	Package   string
	Version   string
	Build     int
	Component string
	Name      string // the Helm release name
	Namespace string
	Chart     spec.ChartRef
	Install   spec.Install
	// Wave is the package's place in the requirement order: 0 requires
	// nothing in the plan, N requires a package of wave N-1 at most.
	// Level is the component's within its package: 0 depends on nothing,
	// N on a component of level N-1 at most. Releases of one wave and
	// level are installed together, then waited for together, as
	// kubepkg's operator installs every package whose requirements are
	// Ready at once, and a package's components after those they
	// dependsOn (the Foreman stack's members need one another's objects
	// to become ready).
	Wave, Level int
}

// String is "release NAME in NAMESPACE (package VERSION build N)".
func (r Release) String() string {
	return fmt.Sprintf("release %s in %s (%s %s build %d)", r.Name, r.Namespace, r.Package, r.Version, r.Build)
}

// ErrUnresolvable is returned when the plan cannot be made: a missing
// build, a requirement nothing meets, a cycle.
var ErrUnresolvable = fmt.Errorf("does not resolve")

// Resolve plans the installation of target from a verified index, as a
// kubepkg client would resolve it: a release set's members at the builds
// it pins; each variant's requires (a package with a semver constraint,
// or a capability some package provides) and dependsOn met by a package of
// the plan or pulled in from the index (the newest build of the newest
// version that meets every constraint); packages ordered after what they
// require; each package's components ordered by their install.dependsOn.
// variant names the target's variant to install ("" is "default", as
// kubepkg's operator takes it when a Package names none; every other
// package gets "default" too).
func Resolve(x *index.RepositoryIndex, target evidence.Target, variant string) (*Plan, error) {
	top := x.Find(target.Package, target.Version, target.Build)
	if top == nil {
		return nil, fmt.Errorf("%s %w: it is not in the index%s", target, ErrUnresolvable, offered(x, target.Package))
	}
	r := &resolver{x: x, chosen: map[string]*PackageBuild{}, variant: variant, target: target.Package}
	p := &Plan{Target: target}
	members, isSet, err := index.SetMembers(&top.Spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", target, err)
	}
	p.Set = isSet
	if err := r.choose(target.Package, top, "requested"); err != nil {
		return nil, err
	}
	for _, m := range members {
		v := x.Find(m.Package, m.Version, m.Build)
		if v == nil {
			return nil, fmt.Errorf("release set %s pins %s, which %w: it is not in the index%s", target, m, ErrUnresolvable, offered(x, m.Package))
		}
		if err := r.choose(m.Package, v, "member of "+target.Package+" "+target.Version); err != nil {
			return nil, err
		}
	}
	if err := r.requirements(); err != nil {
		return nil, err
	}
	order, err := r.order()
	if err != nil {
		return nil, err
	}
	wave := map[string]int{}
	for _, name := range order {
		for _, d := range r.edges[name] {
			wave[name] = max(wave[name], wave[d]+1)
		}
		pb := r.chosen[name]
		p.Packages = append(p.Packages, *pb)
		rels, pre, err := releasesOf(pb)
		if err != nil {
			return nil, err
		}
		for i := range rels {
			rels[i].Wave = wave[name]
		}
		p.Releases = append(p.Releases, rels...)
		p.PreUpgrade = append(p.PreUpgrade, pre...)
	}
	return p, nil
}

type resolver struct {
	x       *index.RepositoryIndex
	chosen  map[string]*PackageBuild
	variant string
	target  string
	// edges[a] are the packages a requires.
	edges map[string][]string
}

func (r *resolver) choose(name string, v *index.IndexVersion, why string) error {
	vr, err := pickVariant(&v.Spec, r.variantFor(name))
	if err != nil {
		return fmt.Errorf("%s %s build %d: %w", name, v.Version, v.Build, err)
	}
	r.chosen[name] = &PackageBuild{Name: name, Version: v.Version, Build: v.Build, Spec: &v.Spec, Variant: vr, Why: why}
	return nil
}

// variantFor is the variant asked for the target; every other package
// gets its first.
func (r *resolver) variantFor(name string) string {
	if name == r.target {
		return r.variant
	}
	return ""
}

// defaultVariant is the variant kubepkg's operator installs when a
// Package names none (controller/desired.go variantName).
const defaultVariant = "default"

// pickVariant returns the variant to install: name, else "default". A
// package without variants (a meta package with nothing to install)
// needs none.
func pickVariant(s *spec.PackageSpec, name string) (string, error) {
	if name == "" {
		name = defaultVariant
	}
	if len(s.Variants) == 0 {
		return "", nil
	}
	for _, v := range s.Variants {
		if v.Name == name {
			return name, nil
		}
	}
	names := make([]string, 0, len(s.Variants))
	for _, v := range s.Variants {
		names = append(names, v.Name)
	}
	return "", fmt.Errorf("variant %s not found (it has %s); kubepkg's operator installs %q unless the Package names another", name, strings.Join(names, ", "), defaultVariant)
}

func variantOf(pb *PackageBuild) *spec.Variant {
	for i := range pb.Spec.Variants {
		if pb.Spec.Variants[i].Name == pb.Variant {
			return &pb.Spec.Variants[i]
		}
	}
	return nil
}

// requirements meets every requirement of every chosen package, pulling
// packages in from the index until nothing is missing.
func (r *resolver) requirements() error {
	r.edges = map[string][]string{}
	for done := map[string]bool{}; ; {
		var next string
		for _, n := range mapKeys(r.chosen) {
			if !done[n] {
				next = n
				break
			}
		}
		if next == "" {
			return nil
		}
		done[next] = true
		pb := r.chosen[next]
		v := variantOf(pb)
		if v == nil {
			continue
		}
		reqs := slices.Clone(v.Requires)
		for _, d := range v.DependsOn {
			reqs = append(reqs, spec.Requirement{Package: d})
		}
		for _, q := range reqs {
			if q.Optional {
				continue
			}
			dep, err := r.meet(pb, q)
			if err != nil {
				return err
			}
			if dep != "" && dep != next && !slices.Contains(r.edges[next], dep) {
				r.edges[next] = append(r.edges[next], dep)
			}
		}
	}
}

// meet returns the package of the plan that meets q for pb, choosing one
// from the index when none does.
func (r *resolver) meet(pb *PackageBuild, q spec.Requirement) (string, error) {
	by := pb.Name + " " + pb.Version
	if q.Capability != "" {
		for _, n := range mapKeys(r.chosen) {
			if provides(n, r.chosen[n].Spec, q.Capability) {
				return n, nil
			}
		}
		for _, n := range mapKeys(r.x.Packages) {
			for _, v := range newestBuilds(r.x.Packages[n].Versions) {
				if provides(n, &v.Spec, q.Capability) {
					if err := r.choose(n, v, "provides "+q.Capability+" for "+by); err != nil {
						return "", err
					}
					return n, nil
				}
			}
		}
		return "", fmt.Errorf("%s %w: it requires the capability %q and no package of the index provides it; publish a package that provides it (spec.package.provides) or drop the requirement", by, ErrUnresolvable, q.Capability)
	}
	if c, ok := r.chosen[q.Package]; ok {
		if !satisfies(c.Version, q.Version) {
			return "", fmt.Errorf("%s %w: it requires %s %s, but the plan has %s (%s)", by, ErrUnresolvable, q.Package, q.Version, c, c.Why)
		}
		return q.Package, nil
	}
	p := r.x.Packages[q.Package]
	if p == nil {
		return "", fmt.Errorf("%s %w: it requires the package %s, which is not in the index", by, ErrUnresolvable, q.Package)
	}
	for _, v := range newestBuilds(p.Versions) {
		if satisfies(v.Version, q.Version) {
			return q.Package, r.choose(q.Package, v, "required by "+by)
		}
	}
	return "", fmt.Errorf("%s %w: it requires %s %s and no version of it in the index meets that%s", by, ErrUnresolvable, q.Package, q.Version, offered(r.x, q.Package))
}

// order returns the chosen packages with each after what it requires;
// among packages free to go, by name.
func (r *resolver) order() ([]string, error) {
	var out []string
	placed := map[string]bool{}
	for len(out) < len(r.chosen) {
		progress := false
		for _, n := range mapKeys(r.chosen) {
			if placed[n] {
				continue
			}
			if slices.ContainsFunc(r.edges[n], func(d string) bool { return !placed[d] }) {
				continue
			}
			placed[n], progress = true, true
			out = append(out, n)
		}
		if !progress {
			var left []string
			for _, n := range mapKeys(r.chosen) {
				if !placed[n] {
					left = append(left, n)
				}
			}
			return nil, fmt.Errorf("the requirements of %s form a cycle, so no install order %w", strings.Join(left, ", "), ErrUnresolvable)
		}
	}
	return out, nil
}

// releasesOf returns the components of pb's variant that kubepkg's
// operator installs (those with install set), each after the components
// its install.dependsOn names, ties in the order the variant lists them
// (controller/desired.go topoOrder); components of phase PreUpgrade are
// returned apart: they run only on an upgrade from another version,
// before the others, and are removed after it.
func releasesOf(pb *PackageBuild) (rels, preUpgrade []Release, err error) {
	v := variantOf(pb)
	if v == nil {
		return nil, nil, nil
	}
	byName := map[string]spec.Component{}
	for _, c := range v.Components {
		if c.Install != nil {
			byName[c.Name] = c
		}
	}
	placed := map[string]bool{}
	level := map[string]int{}
	var visit func(c spec.Component, path []string) error
	visit = func(c spec.Component, path []string) error {
		if placed[c.Name] {
			return nil
		}
		if slices.Contains(path, c.Name) {
			return fmt.Errorf("%s: components depend on each other in a cycle: %s -> %s", pb, strings.Join(path, " -> "), c.Name)
		}
		for _, d := range c.Install.DependsOn {
			dc, ok := byName[d]
			if !ok {
				return fmt.Errorf("%s: component %s not found in variant %s for dependency %s", pb, d, v.Name, c.Name)
			}
			if dc.Install.Phase == "PreUpgrade" && c.Install.Phase != "PreUpgrade" {
				return fmt.Errorf("%s: component %s depends on %s, a pre-upgrade hook, which runs only on upgrades", pb, c.Name, d)
			}
			if err := visit(dc, append(path, c.Name)); err != nil {
				return err
			}
			level[c.Name] = max(level[c.Name], level[d]+1)
		}
		placed[c.Name] = true
		if c.Chart == nil {
			return fmt.Errorf("%s: component %s has no chart", pb, c.Name)
		}
		if c.Install.Namespace == "" {
			return fmt.Errorf("%s: component %s has empty namespace in Install section (kubepkg's operator refuses it)", pb, c.Name)
		}
		rel := Release{Package: pb.Name, Version: pb.Version, Build: pb.Build, Component: c.Name, Chart: *c.Chart, Install: *c.Install, Level: level[c.Name]}
		rel.Name = c.Install.ReleaseName
		if rel.Name == "" {
			rel.Name = c.Name
		}
		rel.Namespace = c.Install.Namespace
		if c.Install.Phase == "PreUpgrade" {
			preUpgrade = append(preUpgrade, rel)
		} else {
			rels = append(rels, rel)
		}
		return nil
	}
	for _, c := range v.Components {
		if c.Install == nil {
			continue
		}
		if err := visit(byName[c.Name], nil); err != nil {
			return nil, nil, err
		}
	}
	return rels, preUpgrade, nil
}

// provides reports whether the package name with spec s provides c: its
// own name, or a name or capability in provides.
func provides(name string, s *spec.PackageSpec, c string) bool {
	return name == c || slices.Contains(s.Provides, c)
}

// newestBuilds returns, newest version first, the newest build of each
// version: what a kubepkg store offers its resolver.
func newestBuilds(vs []index.IndexVersion) []*index.IndexVersion {
	sorted := slices.Clone(vs)
	index.SortNewestFirst(sorted)
	var out []*index.IndexVersion
	seen := map[string]bool{}
	for i := range sorted {
		if !seen[sorted[i].Version] {
			seen[sorted[i].Version] = true
			out = append(out, &sorted[i])
		}
	}
	return out
}

// satisfies reports whether version meets a semver constraint ("" or "*"
// is any version).
func satisfies(version, constraint string) bool {
	if constraint == "" || constraint == "*" {
		return true
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return false
	}
	v, err := semver.NewVersion(version)
	return err == nil && c.Check(v)
}

// offered says which versions of name the index has, for a message.
func offered(x *index.RepositoryIndex, name string) string {
	p := x.Packages[name]
	if p == nil || len(p.Versions) == 0 {
		return " (the index has no package " + name + ")"
	}
	var vs []string
	for i, v := range p.Versions {
		if i == 5 {
			vs = append(vs, "…")
			break
		}
		vs = append(vs, fmt.Sprintf("%s build %d", v.Version, v.Build))
	}
	return " (it has " + strings.Join(vs, ", ") + ")"
}

func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
