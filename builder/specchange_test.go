package builder

import (
	"errors"
	"strings"
	"testing"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/spec"
)

// TestSpecChange: the first field where a recipe now differs from the
// spec published for its version and build, found without building.
func TestSpecChange(t *testing.T) {
	base := func() *recipe.Recipe {
		r := &recipe.Recipe{}
		r.Metadata.Name = "foreman"
		r.Spec.Version, r.Spec.Build = "3.15.0", 2
		r.Spec.Package.Provides = []string{"foreman"}
		r.Spec.Package.Variants = []spec.Variant{{Name: "default",
			Requires:   []spec.Requirement{{Package: "pulp", Version: "~3.73"}},
			Components: []spec.Component{{Name: "foreman", Path: "foreman", Install: &spec.Install{Namespace: "foreman"}}}}}
		return r
	}
	charts := map[string]*spec.ChartRef{"foreman": {Repository: "oci://registry.example/foreman", Name: "foreman", Version: "3.15.0-2", Digest: "sha256:" + strings.Repeat("a", 64)}}
	rec := Record(base(), charts)
	d, err := rec.Spec.Digest()
	if err != nil {
		t.Fatal(err)
	}
	pub := &index.IndexVersion{Version: "3.15.0", Build: 2, Digest: d, Spec: rec.Spec}
	for _, tc := range []struct {
		name string
		edit func(r *recipe.Recipe)
		want string // "" when unchanged
	}{
		{"unchanged", func(*recipe.Recipe) {}, ""},
		{"v spelling", func(r *recipe.Recipe) { r.Spec.Version = "v3.15.0" }, ""},
		{"annotations are not the spec", func(r *recipe.Recipe) { r.Metadata.Annotations = map[string]string{"kubepkg.dev/description": "new"} }, ""},
		{"a capability added", func(r *recipe.Recipe) {
			r.Spec.Package.Provides = append(r.Spec.Package.Provides, "build:foreman@3.15.0+build.2")
		},
			`spec.provides ["foreman"], the recipe now says ["foreman","build:foreman@3.15.0+build.2"]`},
		{"a requirement changed", func(r *recipe.Recipe) { r.Spec.Package.Variants[0].Requires[0].Version = "~3.74" },
			`spec.variants[name=default].requires[0].version "~3.73", the recipe now says "~3.74"`},
		{"an install setting", func(r *recipe.Recipe) { r.Spec.Package.Variants[0].Components[0].Install.Namespace = "katello" },
			`spec.variants[name=default].components[name=foreman].install.namespace "foreman", the recipe now says "katello"`},
		{"images added", func(r *recipe.Recipe) {
			r.Spec.Package.Images = []string{"quay.io/foreman/foreman@sha256:" + strings.Repeat("b", 64)}
		},
			`spec.images absent, the recipe now says ["quay.io/foreman/foreman@sha256:bbbb`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base()
			tc.edit(r)
			err := SpecChange(r, pub)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("SpecChange = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrSpecChanged) || !strings.Contains(err.Error(), "foreman 3.15.0 build 2 is published with "+tc.want) || !strings.HasSuffix(err.Error(), "so bump spec.build") {
				t.Fatalf("SpecChange = %v\nwant one naming %s and saying to bump spec.build", err, tc.want)
			}
		})
	}
}
