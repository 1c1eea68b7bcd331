package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"kbuild.dev/kbuild/spec"
)

// Package is one side of a comparison: a version of a package as built
// from a recipe or as published in an index.
type Package struct {
	// Name is the package name.
	Name string
	// Spec is the package spec as a build record holds it: components
	// point at their charts, whose Repository may be empty for a build
	// that was not pushed (Compare ignores repositories).
	Spec spec.PackageSpec
	// Charts are the package's charts rendered with default values.
	Charts []Chart
}

// Chart is one chart of a package, rendered with its default values.
type Chart struct {
	// Name is the chart key of the recipe, the chart's name.
	Name string
	// Digest is "sha256:<hex>" of the chart archive.
	Digest string
	// Objects are the rendered objects: templates and crds/.
	Objects []map[string]any
	// CRDs are the names of the CustomResourceDefinitions the chart ships.
	CRDs []string
}

// Change says how something differs between the base and the head.
type Change string

// The kinds of change.
const (
	Added   Change = "added"
	Removed Change = "removed"
	Changed Change = "changed"
)

// Release is a version and build of a package.
type Release struct {
	Version string
	Build   int
}

// String returns "VERSION build N".
func (r Release) String() string { return fmt.Sprintf("%s build %d", r.Version, r.Build) }

// Report is what changed from a base version of a package to a head
// version. Every list is sorted.
type Report struct {
	// Package is the package name.
	Package string
	// Base is the release compared against; nil for a new package.
	Base *Release
	// Head is the release under review; nil when the package is removed.
	Head *Release
	// Charts lists charts added, removed or whose archive changed.
	Charts []ChartChange
	// Objects lists rendered objects added, removed or changed, by chart,
	// kind, namespace and name.
	Objects []ObjectChange
	// Images, CRDs, Provides and Conflicts are set differences of the
	// package spec (CRDs also count those the charts ship).
	Images, CRDs, Provides, Conflicts SetChange
	// Requires lists requirements of variants added, removed or changed.
	Requires []RequirementChange
	// Rollback is the change of rollback safety, nil when unchanged.
	Rollback *ValueChange
	// Permissions is the change of declared permissions, nil when
	// unchanged.
	Permissions *ValueChange
	// SpecChanged reports whether the package specs differ in anything
	// but chart repositories (components, install settings, variants…).
	SpecChanged bool
}

// ChartChange is a chart added, removed, or whose archive changed.
type ChartChange struct {
	Name                   string
	Change                 Change
	BaseDigest, HeadDigest string
}

// ObjectChange is a rendered object added, removed or changed.
type ObjectChange struct {
	// Chart is the chart that renders the object.
	Chart string
	// Kind, Namespace and Name identify the object; Namespace is empty
	// when the rendered object does not set one.
	Kind, Namespace, Name string
	Change                Change
	// Diff is the unified diff of the object's YAML (for an added object
	// every line is added, for a removed one every line removed).
	Diff string
}

// Title returns "Kind namespace/name", or "Kind name" without a namespace.
func (o ObjectChange) Title() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// SetChange is what was added to and removed from a set of names.
type SetChange struct {
	Added, Removed []string
}

// RequirementChange is a requirement of a variant added, removed, or
// whose constraint changed.
type RequirementChange struct {
	Variant string
	// Target is "package NAME" or "capability NAME".
	Target string
	Change Change
	// Before and After describe the requirement ("VERSION", plus
	// " (optional)"); empty on the side where it is absent.
	Before, After string
}

// ValueChange is a value before and after.
type ValueChange struct {
	Before, After string
}

// Compare returns what changed from base to head. A nil base means a new
// package (everything added); a nil head a removed one.
func Compare(base, head *Package) *Report {
	r := &Report{}
	var bs, hs *spec.PackageSpec
	var bc, hc []Chart
	if base != nil {
		r.Package = base.Name
		r.Base = &Release{base.Spec.Version, base.Spec.Build}
		bs, bc = &base.Spec, base.Charts
	}
	if head != nil {
		r.Package = head.Name
		r.Head = &Release{head.Spec.Version, head.Spec.Build}
		hs, hc = &head.Spec, head.Charts
	}
	if bs == nil {
		bs = &spec.PackageSpec{}
	}
	if hs == nil {
		hs = &spec.PackageSpec{}
	}
	r.Charts = compareCharts(bc, hc)
	r.Objects = compareObjects(bc, hc, r.Base, r.Head)
	r.Images = setDiff(bs.Images, hs.Images)
	r.CRDs = setDiff(crdsOf(bs, bc), crdsOf(hs, hc))
	r.Provides = setDiff(bs.Provides, hs.Provides)
	r.Conflicts = setDiff(bs.Conflicts, hs.Conflicts)
	r.Requires = compareRequires(bs, hs, base != nil, head != nil)
	if b, h := rollbackOf(bs, base != nil), rollbackOf(hs, head != nil); b != h {
		r.Rollback = &ValueChange{b, h}
	}
	if b, h := permissionsOf(bs, base != nil), permissionsOf(hs, head != nil); b != h {
		r.Permissions = &ValueChange{b, h}
	}
	if base != nil && head != nil {
		r.SpecChanged = specKey(bs) != specKey(hs)
	}
	return r
}

// SameRelease reports whether base and head are the same version and build.
func (r *Report) SameRelease() bool {
	return r.Base != nil && r.Head != nil && *r.Base == *r.Head
}

// Changed reports whether anything a subscriber installs differs: a
// chart archive, a rendered object or the package spec.
func (r *Report) Changed() bool {
	return len(r.Charts) > 0 || len(r.Objects) > 0 || r.SpecChanged || r.Base == nil || r.Head == nil
}

// ImmutableViolation returns why the head may not be published when base
// is the published version: the same version and build with different
// chart archives or a different spec. It returns "" when base and head are
// different releases or have the same content.
func (r *Report) ImmutableViolation() string {
	if !r.SameRelease() {
		return ""
	}
	var why []string
	for _, c := range r.Charts {
		switch c.Change {
		case Changed:
			why = append(why, fmt.Sprintf("chart %s archive %s published, %s built", c.Name, c.BaseDigest, c.HeadDigest))
		case Added:
			why = append(why, fmt.Sprintf("chart %s is not in the published version", c.Name))
		case Removed:
			why = append(why, fmt.Sprintf("published chart %s is no longer built", c.Name))
		}
	}
	if len(why) == 0 && r.SpecChanged {
		why = append(why, "the package spec differs")
	}
	return strings.Join(why, "; ")
}

func compareCharts(base, head []Chart) []ChartChange {
	bd, hd := map[string]string{}, map[string]string{}
	for _, c := range base {
		bd[c.Name] = c.Digest
	}
	for _, c := range head {
		hd[c.Name] = c.Digest
	}
	var out []ChartChange
	for _, n := range unionKeys(bd, hd) {
		b, inB := bd[n]
		h, inH := hd[n]
		switch {
		case !inB:
			out = append(out, ChartChange{Name: n, Change: Added, HeadDigest: h})
		case !inH:
			out = append(out, ChartChange{Name: n, Change: Removed, BaseDigest: b})
		case b != h:
			out = append(out, ChartChange{Name: n, Change: Changed, BaseDigest: b, HeadDigest: h})
		}
	}
	return out
}

// objectKey identifies a rendered object within a package.
type objectKey struct {
	chart, kind, namespace, name string
	// nth tells apart objects that share the rest (the second is 1).
	nth int
}

func (k objectKey) less(o objectKey) bool {
	if k.chart != o.chart {
		return k.chart < o.chart
	}
	if k.kind != o.kind {
		return k.kind < o.kind
	}
	if k.namespace != o.namespace {
		return k.namespace < o.namespace
	}
	if k.name != o.name {
		return k.name < o.name
	}
	return k.nth < o.nth
}

// rendered is one rendered object as the diff sees it.
type rendered struct {
	yaml string
	hook bool // a Helm hook or test (annotation helm.sh/hook)
}

// objectsByKey returns every object of charts as YAML by key.
func objectsByKey(charts []Chart) map[objectKey]rendered {
	out := map[objectKey]rendered{}
	for _, c := range charts {
		for _, o := range c.Objects {
			k := objectKey{chart: c.Name, kind: str(o, "kind")}
			hook := false
			if md, ok := o["metadata"].(map[string]any); ok {
				k.namespace, k.name = str(md, "namespace"), str(md, "name")
				ann, _ := md["annotations"].(map[string]any)
				hook = str(ann, "helm.sh/hook") != ""
			}
			for {
				if _, dup := out[k]; !dup {
					break
				}
				k.nth++
			}
			out[k] = rendered{yaml: objectYAML(o), hook: hook}
		}
	}
	return out
}

// generatedToken matches a piece of a name that a template generated
// (randAlphaNum, uuidv4, a hash suffix): five or more characters, digits
// or letters and digits mixed; for hooks and tests, any five or more
// letters and digits.
var (
	generatedToken = regexp.MustCompile(`^[a-z]*[0-9][a-z0-9]*$`)
	hookToken      = regexp.MustCompile(`^[a-z0-9]+$`)
	namePiece      = regexp.MustCompile(`[^-.]+`)
	uuidPiece      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// nameStem returns name with its generated-looking pieces (split at '-'
// and '.', and whole UUIDs) replaced by '*'.
func nameStem(name string, hook bool) string {
	name = uuidPiece.ReplaceAllString(name, "*")
	return namePiece.ReplaceAllStringFunc(name, func(p string) string {
		if len(p) >= 5 && (generatedToken.MatchString(p) || (hook && hookToken.MatchString(p))) {
			return "*"
		}
		return p
	})
}

// matchGenerated pairs objects only in base with objects only in head that
// are the same object under a generated name: same chart, kind and
// namespace, and the same name once generated pieces are masked (see
// nameStem). A stem shared by several objects on a side pairs them in name
// order. It returns base key -> head key.
func matchGenerated(bo, ho map[objectKey]rendered) map[objectKey]objectKey {
	type stemKey struct {
		chart, kind, namespace, stem string
	}
	group := func(m map[objectKey]rendered, other map[objectKey]rendered) map[stemKey][]objectKey {
		g := map[stemKey][]objectKey{}
		for k, o := range m {
			if _, both := other[k]; both {
				continue
			}
			sk := stemKey{k.chart, k.kind, k.namespace, nameStem(k.name, o.hook)}
			if sk.stem == k.name {
				continue // nothing generated in the name
			}
			g[sk] = append(g[sk], k)
		}
		for _, ks := range g {
			sort.Slice(ks, func(i, j int) bool { return ks[i].less(ks[j]) })
		}
		return g
	}
	bg, hg := group(bo, ho), group(ho, bo)
	pairs := map[objectKey]objectKey{}
	for sk, bks := range bg {
		hks := hg[sk]
		for i := 0; i < len(bks) && i < len(hks); i++ {
			pairs[bks[i]] = hks[i]
		}
	}
	return pairs
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// objectYAML encodes an object as YAML with sorted keys and two-space
// indentation, the form the diff is made of.
func objectYAML(o map[string]any) string {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(o); err != nil {
		// Objects come from decoding YAML, so they encode; say so if not.
		return fmt.Sprintf("# cannot encode object: %v\n", err)
	}
	enc.Close()
	return buf.String()
}

func compareObjects(base, head []Chart, br, hr *Release) []ObjectChange {
	bo, ho := objectsByKey(base), objectsByKey(head)
	renamed := matchGenerated(bo, ho)
	paired := map[objectKey]bool{}
	for _, hk := range renamed {
		paired[hk] = true
	}
	keys := make([]objectKey, 0, len(bo)+len(ho))
	for k := range bo {
		keys = append(keys, k)
	}
	for k := range ho {
		if _, ok := bo[k]; !ok && !paired[k] {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	label := func(side string, rel *Release, k objectKey) string {
		if rel == nil {
			return "/dev/null"
		}
		p := side + "/" + k.chart + "/" + k.kind
		if k.namespace != "" {
			p += "/" + k.namespace
		}
		p += "/" + k.name
		if k.nth > 0 {
			p += fmt.Sprintf("#%d", k.nth+1)
		}
		return p + ".yaml"
	}
	var out []ObjectChange
	for _, k := range keys {
		b, inB := bo[k]
		h, inH := ho[k]
		hk := k
		if nk, ok := renamed[k]; ok {
			hk, h, inH = nk, ho[nk], true
		}
		oc := ObjectChange{Chart: k.chart, Kind: k.kind, Namespace: k.namespace, Name: hk.name}
		if hk.nth > 0 {
			oc.Name += fmt.Sprintf(" (#%d)", hk.nth+1)
		}
		if hk != k {
			oc.Name += " (was " + k.name + ")"
		}
		switch {
		case !inB:
			oc.Change = Added
			oc.Diff = unified("/dev/null", label("b", hr, k), "", h.yaml)
		case !inH:
			oc.Change = Removed
			oc.Diff = unified(label("a", br, k), "/dev/null", b.yaml, "")
		case b.yaml != h.yaml:
			oc.Change = Changed
			oc.Diff = unified(label("a", br, k), label("b", hr, hk), b.yaml, h.yaml)
		default:
			continue
		}
		out = append(out, oc)
	}
	return out
}

func setDiff(a, b []string) SetChange {
	in := func(xs []string) map[string]bool {
		m := make(map[string]bool, len(xs))
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	am, bm := in(a), in(b)
	var s SetChange
	for x := range bm {
		if !am[x] {
			s.Added = append(s.Added, x)
		}
	}
	for x := range am {
		if !bm[x] {
			s.Removed = append(s.Removed, x)
		}
	}
	sort.Strings(s.Added)
	sort.Strings(s.Removed)
	return s
}

// crdsOf returns the CRDs a spec declares and its charts ship.
func crdsOf(s *spec.PackageSpec, charts []Chart) []string {
	out := append([]string(nil), s.CRDs...)
	for _, c := range charts {
		out = append(out, c.CRDs...)
	}
	return out
}

func compareRequires(base, head *spec.PackageSpec, hasBase, hasHead bool) []RequirementChange {
	type key struct{ variant, target string }
	collect := func(s *spec.PackageSpec) map[key]string {
		m := map[key]string{}
		for _, v := range s.Variants {
			for _, q := range v.Requirements() {
				t := "package " + q.Package
				if q.Package == "" {
					t = "capability " + q.Capability
				}
				d := q.Version
				if d == "" {
					d = "any version"
				}
				if q.Optional {
					d += " (optional)"
				}
				m[key{v.Name, t}] = d
			}
		}
		return m
	}
	bm, hm := collect(base), collect(head)
	keys := make([]key, 0, len(bm)+len(hm))
	for k := range bm {
		keys = append(keys, k)
	}
	for k := range hm {
		if _, ok := bm[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].variant != keys[j].variant {
			return keys[i].variant < keys[j].variant
		}
		return keys[i].target < keys[j].target
	})
	var out []RequirementChange
	for _, k := range keys {
		b, inB := bm[k]
		h, inH := hm[k]
		rc := RequirementChange{Variant: k.variant, Target: k.target, Before: b, After: h}
		switch {
		case !inB:
			rc.Change = Added
		case !inH:
			rc.Change = Removed
		case b != h:
			rc.Change = Changed
		default:
			continue
		}
		out = append(out, rc)
	}
	return out
}

// rollbackOf describes a spec's rollback safety: "safe", "unsafe" or
// "undeclared"; "" for an absent side.
func rollbackOf(s *spec.PackageSpec, present bool) string {
	switch {
	case !present:
		return ""
	case s.Rollback == nil:
		return "undeclared"
	case s.Rollback.Safe:
		return "safe"
	}
	return "unsafe"
}

// permissionsOf describes declared permissions as compact JSON; "" for an
// absent side or none declared.
func permissionsOf(s *spec.PackageSpec, present bool) string {
	if !present || s.Permissions == nil {
		return ""
	}
	b, _ := json.Marshal(s.Permissions)
	return string(b)
}

// specKey returns the canonical JSON of s without chart repositories: a
// build that was not pushed has none, and where a chart is stored does
// not change what it installs.
func specKey(s *spec.PackageSpec) string {
	cp := *s
	cp.Variants = make([]spec.Variant, len(s.Variants))
	for i, v := range s.Variants {
		nv := v
		nv.Components = make([]spec.Component, len(v.Components))
		for j, c := range v.Components {
			if c.Chart != nil {
				ch := *c.Chart
				ch.Repository = ""
				c.Chart = &ch
			}
			nv.Components[j] = c
		}
		cp.Variants[i] = nv
	}
	b, err := cp.CanonicalJSON()
	if err != nil {
		return fmt.Sprintf("unencodable spec: %v", err)
	}
	return string(b)
}

func unionKeys(a, b map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}
