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

	"kbuild.dev/kbuild/index"
)

func TestPlanShards(t *testing.T) {
	tests := []struct {
		name   string
		build  []string
		n      int
		shards [][]string
	}{
		{name: "nothing to build", build: nil, n: 3, shards: [][]string{}},
		{name: "one shard", build: []string{"a", "b", "c"}, n: 1, shards: [][]string{{"a", "b", "c"}}},
		{name: "round robin", build: []string{"a", "b", "c", "d", "e"}, n: 2, shards: [][]string{{"a", "c", "e"}, {"b", "d"}}},
		{name: "fewer recipes than shards", build: []string{"a", "b"}, n: 4, shards: [][]string{{"a"}, {"b"}}},
		{name: "as many as shards", build: []string{"a", "b", "c"}, n: 3, shards: [][]string{{"a"}, {"b"}, {"c"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := planShards(tc.build, []string{"x"}, tc.n)
			got := [][]string{}
			for i, s := range p.Shards {
				if s.Index != i {
					t.Errorf("shard %d has index %d", i, s.Index)
				}
				got = append(got, s.Recipes)
			}
			if !reflect.DeepEqual(got, tc.shards) {
				t.Errorf("planShards(%v, %d) = %v, want %v", tc.build, tc.n, got, tc.shards)
			}
			if !reflect.DeepEqual(p.UpToDate, []string{"x"}) {
				t.Errorf("upToDate = %v", p.UpToDate)
			}
		})
	}
}

// planIndex writes an index publishing the given name@version+build
// releases and returns its path.
func planIndex(t *testing.T, releases ...string) string {
	t.Helper()
	b := index.NewBuilder()
	for i, rel := range releases {
		var name, version string
		var build int
		if _, err := fmt.Sscanf(strings.NewReplacer("@", " ", "+", " ").Replace(rel), "%s %s %d", &name, &version, &build); err != nil {
			t.Fatalf("release %q: %v", rel, err)
		}
		rec := &index.PackageSource{
			APIVersion: index.RecordAPIVersion, Kind: index.RecordKind,
			Metadata: index.RecordMetadata{Name: name},
			Spec: index.PackageSpec{Version: version, Build: build, Variants: []index.Variant{{Name: "default", Components: []index.Component{{
				Name:  name,
				Chart: &index.ChartRef{Repository: "oci://127.0.0.1:1/p/" + name, Name: name, Version: fmt.Sprintf("%s-%d", version, build), Digest: fmt.Sprintf("sha256:%064x", i+1)},
			}}}}},
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
	idx := planIndex(t, "smart-proxy@3.14.0+1", "virt-stack@1.0.0+1", "virt-template@0.2.2+2", "gone@1.0.0+1")
	pub := signIndex(t, idx)

	tests := []struct {
		name string
		args []string
		want buildPlan
	}{
		{
			name: "first publish",
			args: []string{"plan", "recipes/", "--format", "json"},
			want: buildPlan{Shards: []planShard{{0, []string{"recipes/broken", "recipes/smart-proxy", "recipes/virt-stack", "recipes/virt-template"}}}, UpToDate: []string{}},
		},
		{
			name: "against an index, two shards",
			args: []string{"plan", "recipes/", "--index", idx, "--public-key", pub, "--shards", "2", "--format", "json"},
			want: buildPlan{Shards: []planShard{{0, []string{"recipes/broken"}}, {1, []string{"recipes/virt-template"}}}, UpToDate: []string{"recipes/smart-proxy", "recipes/virt-stack"}},
		},
		{
			name: "everything published",
			args: []string{"plan", "recipes/smart-proxy", "recipes/virt-stack", "--index", idx, "--public-key", pub, "--shards", "3", "--format", "json"},
			want: buildPlan{Shards: []planShard{}, UpToDate: []string{"recipes/smart-proxy", "recipes/virt-stack"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := kbuild(t, work, nil, tc.args...)
			if r.code != 0 {
				t.Fatalf("kbuild %s: %s", strings.Join(tc.args, " "), r)
			}
			var got buildPlan
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
