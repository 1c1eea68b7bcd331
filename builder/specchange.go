package builder

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/spec"
)

// ErrSpecChanged is wrapped by SpecChange's error.
var ErrSpecChanged = errors.New("the recipe changed since its version and build were published")

// SpecChange compares the spec recipe r makes with pub, the published
// entry of r's version and build, without building: every chart a
// component of r packs is taken as published (by variant and component
// name), so what differs is what the recipe says — requirements,
// provides, images, install settings, a component added or removed. A
// change inside a chart's files needs a build to see ('kbuild
// rebuild-check', 'kbuild diff --fail-on-immutable-change'). The error,
// which wraps ErrSpecChanged, names the first field that differs, both
// values, and says to bump spec.build: a published version never changes,
// and kubepkg clients would go on running the old spec.
func SpecChange(r *recipe.Recipe, pub *index.IndexVersion) error {
	charts := map[string]*spec.ChartRef{}
	for _, v := range r.Spec.Package.Variants {
		for _, c := range v.Components {
			if pc := publishedChart(&pub.Spec, v.Name, c.Name); pc != nil {
				charts[c.Path] = pc
			}
		}
	}
	rec := Record(r, charts)
	if d, err := rec.Spec.Digest(); err == nil && d == pub.Digest {
		return nil
	}
	a, err := generic(&pub.Spec)
	if err != nil {
		return err
	}
	b, err := generic(&rec.Spec)
	if err != nil {
		return err
	}
	field, was, now := firstSpecDifference("spec", a, b)
	if field == "" {
		return nil
	}
	return fmt.Errorf("%w: %s %s build %d is published with %s %s, the recipe now says %s; published versions never change (kubepkg clients keep the published spec), so bump spec.build",
		ErrSpecChanged, r.Metadata.Name, rec.Spec.Version, rec.Spec.Build, field, was, now)
}

// publishedChart returns the chart of component comp of variant in s.
func publishedChart(s *spec.PackageSpec, variant, comp string) *spec.ChartRef {
	for _, v := range s.Variants {
		if v.Name != variant {
			continue
		}
		for _, c := range v.Components {
			if c.Name == comp && c.Chart != nil {
				ref := *c.Chart
				return &ref
			}
		}
	}
	return nil
}

// generic is s's canonical JSON (what the spec digest covers), decoded.
func generic(s *spec.PackageSpec) (any, error) {
	data, err := s.CanonicalJSON()
	if err != nil {
		return nil, err
	}
	var v any
	return v, json.Unmarshal(data, &v)
}

// firstSpecDifference returns the path of the first field where a and b
// differ (list items named by their "name" where they have one), and
// each side's value in JSON ("absent" when missing); "" when they are
// equal.
func firstSpecDifference(path string, a, b any) (string, string, string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := slices.Sorted(maps.Keys(am))
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range slices.Compact(keys) {
			av, ain := am[k]
			bv, bin := bm[k]
			switch {
			case !ain:
				return path + "." + k, "absent", show(bv)
			case !bin:
				return path + "." + k, show(av), "absent"
			}
			if f, x, y := firstSpecDifference(path+"."+k, av, bv); f != "" {
				return f, x, y
			}
		}
		return "", "", ""
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			if f, x, y := firstSpecDifference(path+"["+item(al[i], i)+"]", al[i], bl[i]); f != "" {
				return f, x, y
			}
		}
		return "", "", ""
	}
	if show(a) != show(b) {
		return path, show(a), show(b)
	}
	return "", "", ""
}

// item names a list item: name=NAME when it has a name, else its index.
func item(v any, i int) string {
	if m, ok := v.(map[string]any); ok {
		if n, ok := m["name"].(string); ok && n != "" {
			return "name=" + n
		}
	}
	return strconv.Itoa(i)
}

func show(v any) string {
	b, _ := json.Marshal(v) // decoded JSON: cannot fail
	s := string(b)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.TrimSpace(s)
}
