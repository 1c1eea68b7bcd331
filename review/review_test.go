package review

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"kbuild.dev/kbuild/spec"
)

func deployment(ns, name, image string, replicas int) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"replicas": replicas,
			"template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "main", "image": image}},
			}},
		},
	}
}

func object(kind, name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"name": name}}
}

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	imageV1 = "quay.io/x/op:v1@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	imageV2 = "quay.io/x/op:v2@sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

// pkg returns a package "op" with one chart "op" holding objs.
func pkg(version string, build int, digest string, edit func(*spec.PackageSpec), objs ...map[string]any) *Package {
	s := spec.PackageSpec{
		Version:  version,
		Build:    build,
		Images:   []string{imageV1},
		Rollback: &spec.Rollback{Safe: true},
		Variants: []spec.Variant{{
			Name:       "default",
			Requires:   []spec.Requirement{{Package: "base", Version: ">=1.0.0"}},
			Components: []spec.Component{{Name: "op", Chart: &spec.ChartRef{Name: "op", Version: fmt.Sprintf("%s-%d", version, build), Digest: digest}}},
		}},
	}
	if edit != nil {
		edit(&s)
	}
	return &Package{Name: "op", Spec: s, Charts: []Chart{{Name: "op", Digest: digest, Objects: objs}}}
}

func TestCompare(t *testing.T) {
	dep1 := deployment("sys", "op", imageV1, 1)
	dep2 := deployment("sys", "op", imageV2, 1)
	cm := object("ConfigMap", "settings")
	sa := object("ServiceAccount", "op")
	tests := []struct {
		name       string
		base, head *Package
		check      func(t *testing.T, r *Report)
	}{
		{
			name: "new package",
			head: pkg("1.0.0", 1, digestA, nil, dep1, cm),
			check: func(t *testing.T, r *Report) {
				if r.Base != nil || r.Head == nil || *r.Head != (Release{"1.0.0", 1}) {
					t.Errorf("releases = %v, %v; want nil, 1.0.0 build 1", r.Base, r.Head)
				}
				if len(r.Objects) != 2 || r.Objects[0].Kind != "ConfigMap" || r.Objects[1].Kind != "Deployment" {
					t.Fatalf("objects = %+v, want ConfigMap then Deployment, both added", r.Objects)
				}
				for _, o := range r.Objects {
					if o.Change != Added || !strings.HasPrefix(o.Diff, "--- /dev/null\n+++ b/op/") {
						t.Errorf("object %s: %s with diff\n%s", o.Title(), o.Change, o.Diff)
					}
				}
				if !reflect.DeepEqual(r.Images.Added, []string{imageV1}) || len(r.Requires) != 1 || r.Requires[0].Change != Added {
					t.Errorf("images %+v requires %+v", r.Images, r.Requires)
				}
				if !r.Changed() || r.ImmutableViolation() != "" {
					t.Errorf("Changed() = %v, ImmutableViolation() = %q", r.Changed(), r.ImmutableViolation())
				}
			},
		},
		{
			name: "unchanged",
			base: pkg("1.0.0", 1, digestA, nil, dep1, cm),
			head: pkg("1.0.0", 1, digestA, nil, cm, dep1),
			check: func(t *testing.T, r *Report) {
				if r.Changed() || len(r.Objects) > 0 || len(r.summary()) > 0 || r.ImmutableViolation() != "" {
					t.Errorf("report of identical packages: %+v", r)
				}
			},
		},
		{
			name: "image bumped with a new build",
			base: pkg("1.0.0", 1, digestA, nil, dep1, cm),
			head: pkg("1.0.0", 2, digestB, func(s *spec.PackageSpec) { s.Images = []string{imageV2} }, dep2, cm),
			check: func(t *testing.T, r *Report) {
				if len(r.Objects) != 1 || r.Objects[0].Change != Changed || r.Objects[0].Title() != "Deployment sys/op" {
					t.Fatalf("objects = %+v, want Deployment sys/op changed", r.Objects)
				}
				d := r.Objects[0].Diff
				for _, want := range []string{"--- a/op/Deployment/sys/op.yaml\n", "+++ b/op/Deployment/sys/op.yaml\n", "-        - image: " + imageV1, "+        - image: " + imageV2} {
					if !strings.Contains(d, want) {
						t.Errorf("diff lacks %q:\n%s", want, d)
					}
				}
				if !reflect.DeepEqual(r.Images, SetChange{Added: []string{imageV2}, Removed: []string{imageV1}}) {
					t.Errorf("images = %+v", r.Images)
				}
				if !reflect.DeepEqual(r.Charts, []ChartChange{{Name: "op", Change: Changed, BaseDigest: digestA, HeadDigest: digestB}}) {
					t.Errorf("charts = %+v", r.Charts)
				}
				if r.ImmutableViolation() != "" {
					t.Errorf("a new build is not a violation: %q", r.ImmutableViolation())
				}
			},
		},
		{
			name: "same release with other content",
			base: pkg("1.0.0", 1, digestA, nil, dep1),
			head: pkg("1.0.0", 1, digestB, nil, dep2),
			check: func(t *testing.T, r *Report) {
				want := "chart op archive " + digestA + " published, " + digestB + " built"
				if got := r.ImmutableViolation(); got != want {
					t.Errorf("ImmutableViolation() = %q, want %q", got, want)
				}
			},
		},
		{
			name: "same release, same charts, other spec",
			base: pkg("1.0.0", 1, digestA, nil, dep1),
			head: pkg("1.0.0", 1, digestA, func(s *spec.PackageSpec) { s.Provides = []string{"op"} }, dep1),
			check: func(t *testing.T, r *Report) {
				if got := r.ImmutableViolation(); got != "the package spec differs" {
					t.Errorf("ImmutableViolation() = %q", got)
				}
				if !reflect.DeepEqual(r.Provides.Added, []string{"op"}) {
					t.Errorf("provides = %+v", r.Provides)
				}
			},
		},
		{
			name: "chart repository alone does not count",
			base: pkg("1.0.0", 1, digestA, func(s *spec.PackageSpec) {
				s.Variants[0].Components[0].Chart.Repository = "oci://ghcr.io/o/packages/op"
			}, dep1),
			head: pkg("1.0.0", 1, digestA, nil, dep1),
			check: func(t *testing.T, r *Report) {
				if r.Changed() || r.ImmutableViolation() != "" {
					t.Errorf("Changed() = %v, ImmutableViolation() = %q", r.Changed(), r.ImmutableViolation())
				}
			},
		},
		{
			name: "requirements, rollback, CRDs and objects added and removed",
			base: pkg("1.0.0", 1, digestA, nil, dep1, sa),
			head: pkg("1.1.0", 1, digestB, func(s *spec.PackageSpec) {
				s.Rollback = &spec.Rollback{}
				s.CRDs = []string{"ops.x.io"}
				s.Variants[0].Requires = []spec.Requirement{{Package: "base", Version: ">=2.0.0"}, {Capability: "api:x.io/v1", Optional: true}}
			}, dep1, cm),
			check: func(t *testing.T, r *Report) {
				wantReq := []RequirementChange{
					{Variant: "default", Target: "capability api:x.io/v1", Change: Added, After: "any version (optional)"},
					{Variant: "default", Target: "package base", Change: Changed, Before: ">=1.0.0", After: ">=2.0.0"},
				}
				if !reflect.DeepEqual(r.Requires, wantReq) {
					t.Errorf("requires = %+v, want %+v", r.Requires, wantReq)
				}
				if r.Rollback == nil || *r.Rollback != (ValueChange{"safe", "unsafe"}) {
					t.Errorf("rollback = %+v", r.Rollback)
				}
				if !reflect.DeepEqual(r.CRDs.Added, []string{"ops.x.io"}) {
					t.Errorf("crds = %+v", r.CRDs)
				}
				var got []string
				for _, o := range r.Objects {
					got = append(got, string(o.Change)+" "+o.Title())
				}
				if want := []string{"added ConfigMap settings", "removed ServiceAccount op"}; !reflect.DeepEqual(got, want) {
					t.Errorf("objects = %q, want %q", got, want)
				}
			},
		},
		{
			name: "objects with the same identity are told apart",
			base: pkg("1.0.0", 1, digestA, nil, cm, cm),
			head: pkg("1.0.0", 2, digestB, nil, cm),
			check: func(t *testing.T, r *Report) {
				if len(r.Objects) != 1 || r.Objects[0].Change != Removed || r.Objects[0].Name != "settings (#2)" {
					t.Errorf("objects = %+v", r.Objects)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(tc.base, tc.head)
			if r.Package != "op" {
				t.Errorf("Package = %q", r.Package)
			}
			tc.check(t, r)
			// The same inputs print the same bytes.
			var a, b bytes.Buffer
			r.WriteMarkdown(&a)
			Compare(tc.base, tc.head).WriteMarkdown(&b)
			if a.String() != b.String() {
				t.Errorf("WriteMarkdown is not deterministic:\n%s\n---\n%s", a.String(), b.String())
			}
		})
	}
}

func TestWriteText(t *testing.T) {
	base := pkg("1.0.0", 1, digestA, nil, deployment("sys", "op", imageV1, 1))
	head := pkg("1.0.0", 2, digestB, func(s *spec.PackageSpec) { s.Images = []string{imageV2} }, deployment("sys", "op", imageV2, 1))
	var buf bytes.Buffer
	if err := Compare(base, head).WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"op: 1.0.0 build 1 -> 1.0.0 build 2\n",
		"  chart op: " + digestA + " -> " + digestB + "\n",
		"  image: - " + imageV1 + "\n",
		"  image: + " + imageV2 + "\n",
		"  objects: 0 added, 1 changed, 0 removed\n",
		"\nchanged Deployment sys/op (chart op)\n--- a/op/Deployment/sys/op.yaml\n",
	}
	for _, w := range want {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("WriteText lacks %q:\n%s", w, buf.String())
		}
	}

	buf.Reset()
	Compare(base, base).WriteText(&buf)
	if got, want := buf.String(), "op: 1.0.0 build 1 (same version and build)\n  no changes\n"; got != want {
		t.Errorf("WriteText of no change = %q, want %q", got, want)
	}
}

func TestWriteMarkdown(t *testing.T) {
	big := object("ConfigMap", "big")
	data := map[string]any{}
	for i := 0; i < 400; i++ {
		data[fmt.Sprintf("k%03d", i)] = "v"
	}
	big["data"] = data
	weird := object("ConfigMap", "fences")
	weird["data"] = map[string]any{"x": "```not a fence```"}
	head := pkg("2.0.0", 1, digestB, func(s *spec.PackageSpec) {
		s.Images = []string{imageV2}
		s.Rollback = nil
	}, big, weird, object("Secret", "s|pipe"))
	base := pkg("1.0.0", 1, digestA, nil)

	tests := []struct {
		name    string
		opts    []MarkdownOption
		want    []string
		notWant []string
	}{
		{
			name: "defaults",
			want: []string{
				"### op: 1.0.0 build 1 → 2.0.0 build 1\n\n",
				"| Change | Before | After |\n|---|---|---|\n",
				"| chart op | `" + digestA + "` | `" + digestB + "` |\n",
				"| image | `" + imageV1 + "` |  |\n",
				"| image |  | `" + imageV2 + "` |\n",
				"| rollback | `safe` | `undeclared` |\n",
				"**Objects:** 3 added, 0 changed, 0 removed\n",
				"<details><summary>added <code>ConfigMap big</code> (chart op)</summary>\n\n```diff\n--- /dev/null\n",
				"_208 more lines not shown; run `kbuild diff` for the full diff._",
				"````diff\n",
				"<code>Secret s|pipe</code>",
			},
		},
		{
			name: "total limit",
			opts: []MarkdownOption{withMaxLines(50), WithCommand("kbuild diff recipes/op")},
			want: []string{
				"_358 more lines not shown; run `kbuild diff recipes/op` for the full diff._",
				"- added <code>ConfigMap fences</code> (chart op): diff not shown, the summary is limited to 50 diff lines; run `kbuild diff recipes/op` for all of it\n",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Compare(base, head).WriteMarkdown(&buf, tc.opts...); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("WriteMarkdown lacks %q:\n%s", w, buf.String())
				}
			}
			if n := strings.Count(buf.String(), "<details>"); n != strings.Count(buf.String(), "</details>") {
				t.Errorf("unbalanced <details>: %s", buf.String())
			}
		})
	}
}

func TestImmutableWarning(t *testing.T) {
	base := pkg("1.0.0", 1, digestA, nil, object("ConfigMap", "a"))
	head := pkg("1.0.0", 1, digestB, nil, object("ConfigMap", "b"))
	var buf bytes.Buffer
	Compare(base, head).WriteMarkdown(&buf)
	want := "> [!WARNING]\n> op@1.0.0 build 1 is unchanged but its content differs (chart op archive " + digestA + " published, " + digestB + " built); if it is published, give the recipe a new build number\n"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("WriteMarkdown lacks %q:\n%s", want, buf.String())
	}
}

// hookPod is a helm test pod, named as charts name them at random.
func hookPod(name, image string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "annotations": map[string]any{"helm.sh/hook": "test"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "t", "image": image}}},
	}
}

// TestCompareGeneratedNames checks that an object whose name a template
// generates is one changed object, not a removal and an addition.
func TestCompareGeneratedNames(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, head []map[string]any
		want       []string // "CHANGE Title"
	}{
		{name: "same names, same content",
			base: []map[string]any{hookPod("web-test-x7k2p", "busybox:1")},
			head: []map[string]any{hookPod("web-test-x7k2p", "busybox:1")}},
		{name: "hook renamed, content changed",
			base: []map[string]any{hookPod("web-test-x7k2p", "busybox:1"), hookPod("web-test-db-aaaaa", "busybox:1")},
			head: []map[string]any{hookPod("web-test-q9m3z", "busybox:2"), hookPod("web-test-db-bbbbb", "busybox:1")},
			want: []string{"changed Pod web-test-db-bbbbb (was web-test-db-aaaaa)", "changed Pod web-test-q9m3z (was web-test-x7k2p)"}},
		{name: "uuid suffix on a plain object",
			base: []map[string]any{object("Job", "migrate-3f2a9c1e-0b7d-4e5f-8a6b-1c2d3e4f5a6b")},
			head: []map[string]any{object("Job", "migrate-9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b")},
			want: []string{"changed Job migrate-9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b (was migrate-3f2a9c1e-0b7d-4e5f-8a6b-1c2d3e4f5a6b)"}},
		{name: "digits suffix",
			base: []map[string]any{object("ConfigMap", "settings-38201")},
			head: []map[string]any{object("ConfigMap", "settings-3007e")},
			want: []string{"changed ConfigMap settings-3007e (was settings-38201)"}},
		{name: "plain words are real renames",
			base: []map[string]any{object("Service", "backend-primary")},
			head: []map[string]any{object("Service", "backend-replica")},
			want: []string{"removed Service backend-primary", "added Service backend-replica"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(pkg("1.0.0", 1, digestA, nil, tc.base...), pkg("1.0.0", 2, digestB, nil, tc.head...))
			var got []string
			for _, o := range r.Objects {
				got = append(got, string(o.Change)+" "+o.Title())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for _, o := range r.Objects {
				if o.Change == Changed && strings.Count(o.Diff, "\n-") > 3 {
					t.Errorf("%s diff removes more than the name and one field:\n%s", o.Title(), o.Diff)
				}
			}
		})
	}
}

// withMaxLines lowers the cap on the diff lines shown for the whole report
// (2000 outside the tests).
func withMaxLines(n int) MarkdownOption { return func(c *markdownConfig) { c.maxLines = n } }
