package bundle

import (
	"strings"
	"testing"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// testIndex: app 2.0.0, 1.1.0, 1.0.0 (each needing lib ^1), lib 2.0.0,
// 1.5.0, 1.0.0; meta 1.0.0 (a meta package: app ~1.0 and the capability
// api:example.com/v1 that lib provides); needs-cap requires an unprovided
// non-api capability; opt requires an absent optional package and an api
// capability nothing provides.
func testIndex() *index.RepositoryIndex {
	v := func(version string, spec spec.PackageSpec) index.IndexVersion {
		spec.Version, spec.Build = version, 1
		return index.IndexVersion{Version: version, Build: 1, Spec: spec}
	}
	needLib := spec.PackageSpec{Variants: []spec.Variant{{Name: "default", Requires: []spec.Requirement{{Package: "lib", Version: "^1"}}}}}
	return &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{
		"app": {Versions: []index.IndexVersion{v("2.0.0", needLib), v("1.1.0", needLib), v("1.0.0", needLib)}},
		"lib": {Versions: []index.IndexVersion{v("2.0.0", spec.PackageSpec{}), v("1.5.0", spec.PackageSpec{Provides: []string{"api:example.com/v1"}}), v("1.0.0", spec.PackageSpec{})}},
		"meta": {Versions: []index.IndexVersion{v("1.0.0", spec.PackageSpec{Variants: []spec.Variant{
			{Name: "a", Requires: []spec.Requirement{{Package: "app", Version: "~1.0"}}},
			{Name: "b", Requires: []spec.Requirement{{Capability: "api:example.com/v1"}}},
		}})}},
		"provider":  {Versions: []index.IndexVersion{v("1.0.0", spec.PackageSpec{Provides: []string{"storage:fast"}})}},
		"needs-cap": {Versions: []index.IndexVersion{v("1.0.0", spec.PackageSpec{Variants: []spec.Variant{{Name: "d", Requires: []spec.Requirement{{Capability: "storage:fast"}}, DependsOn: []string{"lib"}}}})}},
		"orphan":    {Versions: []index.IndexVersion{v("1.0.0", spec.PackageSpec{Variants: []spec.Variant{{Name: "d", Requires: []spec.Requirement{{Capability: "gpu:nvidia"}}}}})}},
		"opt": {Versions: []index.IndexVersion{v("1.0.0", spec.PackageSpec{Variants: []spec.Variant{{Name: "d", Requires: []spec.Requirement{
			{Package: "absent", Optional: true}, {Capability: "api:cert-manager.io/v1"}}}}})}},
	}}
}

func TestResolve(t *testing.T) {
	cases := []struct {
		name  string
		wants []string
		want  string // name@version, sorted, or the error's text
		note  string
	}{
		{"newest", []string{"app"}, "app@2.0.0 lib@1.5.0", ""},
		{"a constraint", []string{"app@~1.0"}, "app@1.0.0 lib@1.5.0", ""},
		{"meta package and a capability already provided", []string{"meta"}, "app@1.0.0 lib@1.5.0 meta@1.0.0", ""},
		{"constraints combine", []string{"meta", "app@^1"}, "app@1.0.0 lib@1.5.0 meta@1.0.0", ""},
		{"a capability from another package, dependsOn", []string{"needs-cap"}, "lib@2.0.0 needs-cap@1.0.0 provider@1.0.0", ""},
		{"optional and api requirements left to the cluster", []string{"opt"}, "opt@1.0.0", "capability api:cert-manager.io/v1 is provided by no package"},
		{"unsatisfiable", []string{"app@>=3"}, "package app: no version satisfies >=3 (requested); the index has 2.0.0, 1.1.0, 1.0.0", ""},
		{"conflicting constraints", []string{"app@2.0.0", "meta"}, "package app: no version satisfies 2.0.0 (requested) and ~1.0 (required by meta 1.0.0); the index has 2.0.0, 1.1.0, 1.0.0", ""},
		{"absent", []string{"nope"}, "package nope (requested) is not in the index", ""},
		{"unprovided capability", []string{"orphan"}, "orphan 1.0.0 variant d requires capability gpu:nvidia, which no package in the index provides", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var wants []Want
			for _, w := range tc.wants {
				pw, err := ParseWant(w)
				if err != nil {
					t.Fatal(err)
				}
				wants = append(wants, pw)
			}
			res, err := Resolve(testIndex(), wants)
			var got string
			if err != nil {
				got = err.Error()
			} else {
				var s []string
				for _, p := range res.Packages {
					s = append(s, p.Name+"@"+p.Version.Version)
				}
				got = strings.Join(s, " ")
				if tc.note != "" && !strings.Contains(strings.Join(res.Notes, "\n"), tc.note) {
					t.Errorf("notes = %v, want one containing %q", res.Notes, tc.note)
				}
			}
			if got != tc.want {
				t.Errorf("Resolve(%v) = %s, want %s", tc.wants, got, tc.want)
			}
		})
	}
}

func TestParseWant(t *testing.T) {
	for _, bad := range []string{"Kubevirt", "kubevirt@>>1", "@1.0"} {
		if _, err := ParseWant(bad); err == nil {
			t.Errorf("ParseWant(%q) accepted it", bad)
		}
	}
}

// TestResolveVersionSpelling: a version published as "v2.0.0" (as kubepkg's
// own indexer keeps it) is the version 2.0.0, not one to skip.
func TestResolveVersionSpelling(t *testing.T) {
	x := &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{
		"lib": {Versions: []index.IndexVersion{{Version: "v2.0.0", Build: 1}, {Version: "1.0.0", Build: 1}}},
	}}
	for _, tc := range []struct{ want, got string }{{"lib", "v2.0.0"}, {"lib@~2.0", "v2.0.0"}, {"lib@v1.0.0", "1.0.0"}} {
		w, err := ParseWant(tc.want)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Resolve(x, []Want{w})
		if err != nil || len(res.Packages) != 1 || res.Packages[0].Version.Version != tc.got {
			t.Errorf("Resolve(%s) = %+v, %v; want lib %s", tc.want, res, err, tc.got)
		}
	}
}
