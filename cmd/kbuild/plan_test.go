package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// planIndex writes an index publishing the given name@version+build
// releases and returns its path.
func planIndex(t *testing.T, recipes string, releases ...string) string {
	t.Helper()
	b := index.NewBuilder()
	for i, rel := range releases {
		var name, version string
		var build int
		if _, err := fmt.Sscanf(strings.NewReplacer("@", " ", "+", " ").Replace(rel), "%s %s %d", &name, &version, &build); err != nil {
			t.Fatalf("release %q: %v", rel, err)
		}
		chart := func(n string) *spec.ChartRef {
			return &spec.ChartRef{Repository: "oci://127.0.0.1:1/p/" + n, Name: n, Version: fmt.Sprintf("%s-%d", version, build), Digest: fmt.Sprintf("sha256:%064x", i+1)}
		}
		rec := &spec.PackageSource{
			APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind,
			Metadata: spec.RecordMetadata{Name: name},
			Spec:     spec.PackageSpec{Version: version, Build: build, Variants: []spec.Variant{{Name: "default", Components: []spec.Component{{Name: name, Chart: chart(name)}}}}},
		}
		// A release the recipe in recipes makes is published as that
		// recipe builds it, so that it is up to date.
		if l, err := builder.Load(filepath.Join(recipes, name)); err == nil && l.Recipe != nil && l.Recipe.Spec.Version == version && l.Recipe.Spec.Build == build {
			charts := map[string]*spec.ChartRef{}
			for _, v := range l.Recipe.Spec.Package.Variants {
				for _, c := range v.Components {
					charts[c.Path] = chart(c.Name)
				}
			}
			r := builder.Record(l.Recipe, charts)
			rec = &r
		}
		if err := b.Add(rel, rec, nil); err != nil {
			t.Fatal(err)
		}
	}
	x, err := b.Index(time.Date(2026, 10, 10, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	data, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "index.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestPlan(t *testing.T) {
	work := t.TempDir()
	if err := copyDir(filepath.Join(repoRoot, "examples"), filepath.Join(work, "recipes")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(work, "recipes", "examples.go"))
	// A recipe that does not decode is planned for building.
	if err := os.MkdirAll(filepath.Join(work, "recipes", "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(work, "recipes", "broken", "recipe.yaml"), []byte("apiVersion: kubepkg.dev/v1\nkind: Recipe\nspec: {bogus: 1}\n"), 0o644)
	// smart-proxy 3.14.0 build 1 and virt-stack 1.0.0 build 1 are
	// published; virt-template only in another build.
	idx := planIndex(t, filepath.Join(work, "recipes"), "smart-proxy@3.14.0+1", "virt-stack@1.0.0+1", "virt-template@0.2.2+2", "gone@1.0.0+1")
	pub := signIndex(t, idx)

	tests := []struct {
		name string
		args []string
		want builder.Plan
	}{
		{
			name: "first publish",
			args: []string{"plan", "recipes/", "--format", "json"},
			want: builder.Plan{Shards: []builder.Shard{{Index: 0, Recipes: []string{"recipes/broken", "recipes/smart-proxy", "recipes/virt-stack", "recipes/virt-template"}}}, UpToDate: []string{}},
		},
		{
			name: "against an index, two shards",
			args: []string{"plan", "recipes/", "--index", idx, "--public-key", pub, "--shards", "2", "--format", "json"},
			want: builder.Plan{Shards: []builder.Shard{{Index: 0, Recipes: []string{"recipes/broken"}}, {Index: 1, Recipes: []string{"recipes/virt-template"}}}, UpToDate: []string{"recipes/smart-proxy", "recipes/virt-stack"}},
		},
		{
			name: "everything published",
			args: []string{"plan", "recipes/smart-proxy", "recipes/virt-stack", "--index", idx, "--public-key", pub, "--shards", "3", "--format", "json"},
			want: builder.Plan{Shards: []builder.Shard{}, UpToDate: []string{"recipes/smart-proxy", "recipes/virt-stack"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := kbuild(t, work, nil, tc.args...)
			if r.code != 0 {
				t.Fatalf("kbuild %s: %s", strings.Join(tc.args, " "), r)
			}
			var got builder.Plan
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatalf("kbuild %s: stdout is not JSON: %v\n%s", strings.Join(tc.args, " "), err, r)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("kbuild %s = %+v, want %+v", strings.Join(tc.args, " "), got, tc.want)
			}
			// Empty lists are [] for fromJSON in workflows, never null.
			if strings.Contains(r.stdout, "null") {
				t.Errorf("kbuild %s printed null: %s", strings.Join(tc.args, " "), r.stdout)
			}
		})
	}

	r := kbuild(t, work, nil, "plan", "recipes/", "--index", idx, "--public-key", pub, "--shards", "2")
	want := "shard 0: recipes/broken\nshard 1: recipes/virt-template\nup to date: recipes/smart-proxy\nup to date: recipes/virt-stack\n"
	if r.code != 0 || r.stdout != want || !strings.Contains(r.stderr, "2 to build in 2 shards, 2 up to date\n") || !strings.Contains(r.stderr, "warning: recipe recipes/broken does not decode") {
		t.Errorf("kbuild plan (text) = %s\nwant stdout:\n%s", r, want)
	}

	// A recipe changed since its version and build were published is
	// neither up to date nor buildable: plan names the field and says to
	// bump spec.build.
	file := filepath.Join(work, "recipes", "smart-proxy", "recipe.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(file, []byte(strings.Replace(string(data), "provides: [smart-proxy]", "provides: [smart-proxy, \"build:smart-proxy@3.14.0+build.1\"]", 1)), 0o644)
	r = kbuild(t, work, nil, "plan", "recipes/", "--index", idx, "--public-key", pub)
	if want := `error: recipe recipes/smart-proxy: the recipe changed since its version and build were published: smart-proxy 3.14.0 build 1 is published with spec.provides ["smart-proxy"], the recipe now says ["smart-proxy","build:smart-proxy@3.14.0+build.1"]; published versions never change (kubepkg clients keep the published spec), so bump spec.build`; r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, want) {
		t.Errorf("kbuild plan with a changed recipe = %s\nwant code 1 and %q", r, want)
	}
}

func TestPlanErrors(t *testing.T) {
	key := keygen(t, t.TempDir(), "k") + ".pub"
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{name: "no dir", args: []string{"plan"}, code: 2, want: "name at least one recipes directory"},
		{name: "zero shards", args: []string{"plan", "examples/", "--shards", "0"}, code: 2, want: "--shards 0: give 1 or more"},
		{name: "bad format", args: []string{"plan", "examples/", "--format", "yaml"}, code: 2, want: `--format "yaml": use text or json`},
		{name: "bad format, old spelling", args: []string{"plan", "examples/", "-o", "yaml"}, code: 2, want: "warning: kbuild plan: -o/--output is deprecated and goes away in the next release; use --format\nkbuild plan: --format \"yaml\": use text or json"},
		{name: "unverified index", args: []string{"plan", "examples/", "--index", "nothing/index.yaml"}, code: 2, want: "--index REF needs --public-key FILE or --root-key FILE"},
		{name: "no index yet", args: []string{"plan", "examples/", "--index", "nothing/index.yaml", "--public-key", key}, code: 1, want: "error: index: nothing/index.yaml: not found; for a first publish, plan without --index"},
		{name: "no index yet, old spelling", args: []string{"plan", "examples/", "--against", "nothing/index.yaml", "--public-key", key}, code: 1, want: "warning: kbuild plan: --against is deprecated and goes away in the next release; use --index\nerror: index: nothing/index.yaml: not found"},
		{name: "no recipes", args: []string{"plan", "cmd/"}, code: 1, want: "cmd/: no recipe.yaml in it or in its subdirectories"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := kbuild(t, repoRoot, nil, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("kbuild %s = exit %d, want exit %d with %q:\n%s", strings.Join(tc.args, " "), r.code, tc.code, tc.want, r)
			}
		})
	}
}
