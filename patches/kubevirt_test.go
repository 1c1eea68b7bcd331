package patches

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/recipe"
)

// TestKubevirtOperator runs the whole manifest path on the real upstream
// kubevirt operator manifest: split, exclude the Namespace, drop the
// operator's required node affinity with a merge patch, wrap, render.
func TestKubevirtOperator(t *testing.T) {
	const name = "kubevirt-operator-v1.9.0.yaml"
	data := upstreamFixture(t, name)
	objs, err := Split(name, data)
	if err != nil {
		t.Fatalf("Split = %v", err)
	}
	objs, err = Exclude(objs, []recipe.Selector{{Kind: "Namespace"}})
	if err != nil {
		t.Fatalf("Exclude = %v", err)
	}
	affinity := []string{"spec", "template", "spec", "affinity", "nodeAffinity"}
	err = Apply(objs, []recipe.Patch{{
		Kind: "Deployment",
		Name: "virt-operator",
		Merge: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"affinity": map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": nil}},
		}}}},
	}})
	if err != nil {
		t.Fatalf("Apply = %v", err)
	}
	want := map[string]string{} // KIND/NAME -> serialized object
	for _, o := range objs {
		b, err := o.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		want[o.Kind()+"/"+o.Name()] = string(b)
	}

	for _, opts := range []WrapOptions{{}, {CRDsDir: true}} {
		dst := filepath.Join(t.TempDir(), "kubevirt")
		if err := Wrap(dst, "kubevirt", objs, opts); err != nil {
			t.Fatalf("Wrap(%+v) = %v", opts, err)
		}
		rendered, err := Split("rendered", []byte(renderChart(t, dst)))
		if err != nil {
			t.Fatalf("Split(rendered) = %v", err)
		}
		seen := 0
		for _, o := range rendered {
			id := o.Kind() + "/" + o.Name()
			switch {
			case o.Kind() == "Namespace":
				t.Errorf("rendered chart still has %s", id)
			case opts.CRDsDir && o.Kind() == "CustomResourceDefinition":
				t.Errorf("rendered templates have %s; want it in crds/", id)
			}
			if b, _ := o.Bytes(); string(b) != want[id] {
				t.Errorf("rendered %s differs from the patched object", id)
			}
			seen++
		}
		if opts.CRDsDir {
			seen++ // the one CRD is in crds/
			if _, err := os.Stat(filepath.Join(dst, "crds", "0001-customresourcedefinition-kubevirts.kubevirt.io.yaml")); err != nil {
				t.Errorf("CRD not in crds/: %v", err)
			}
		}
		if seen != len(objs) {
			t.Errorf("rendered %d objects, want %d", seen, len(objs))
		}

		var op *Object
		for _, o := range rendered {
			if o.Kind() == "Deployment" && o.Name() == "virt-operator" {
				op = o
			}
		}
		if op == nil {
			t.Fatal("rendered chart has no Deployment virt-operator")
		}
		na, err := op.Node.Pipe(yaml.Lookup(affinity...))
		if err != nil || na == nil {
			t.Fatalf("virt-operator nodeAffinity = %v, %v; want the preferred terms kept", na, err)
		}
		if f := na.Field("requiredDuringSchedulingIgnoredDuringExecution"); f != nil {
			t.Errorf("virt-operator still has requiredDuringSchedulingIgnoredDuringExecution")
		}
		if f := na.Field("preferredDuringSchedulingIgnoredDuringExecution"); f == nil {
			t.Errorf("virt-operator lost preferredDuringSchedulingIgnoredDuringExecution")
		}
	}
}

// upstreamFixture reads an upstream fixture (testenv.Upstream: ../shared,
// or the cache scripts/fetch-fixtures.sh fills); when it is absent the test
// skips, or fails under CI (testenv.MissingFixture).
func upstreamFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.Upstream(t, name), name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestKubevirtByteForByte wraps the upstream KubeVirt operator manifest and
// checks that every document no patch touched is stored exactly as upstream
// wrote it: unpatched, the stored files joined with the "---" lines between
// them give back the upstream file; with the operator Deployment patched,
// only that document differs.
func TestKubevirtByteForByte(t *testing.T) {
	const name = "kubevirt-operator-v1.9.0.yaml"
	data := upstreamFixture(t, name)
	upstreamDocs := strings.Split(strings.TrimPrefix(string(data), "---\n"), "\n---\n")
	for _, tc := range []struct {
		name    string
		patches []recipe.Patch
		changed string // file name part of the one document that may differ
	}{
		{name: "unpatched"},
		{name: "operator patched", changed: "deployment-virt-operator", patches: []recipe.Patch{{
			Kind: "Deployment", Name: "virt-operator",
			Merge: map[string]any{"spec": map[string]any{"replicas": 3}},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Split(name, data)
			if err != nil {
				t.Fatal(err)
			}
			if err := Apply(objs, tc.patches); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "kubevirt")
			if err := Wrap(dst, "kubevirt", objs, WrapOptions{}); err != nil {
				t.Fatal(err)
			}
			files, err := filepath.Glob(filepath.Join(dst, "files/manifests/*.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != len(upstreamDocs) {
				t.Fatalf("stored %d files, want one per upstream document (%d)", len(files), len(upstreamDocs))
			}
			var joined []string
			for i, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				joined = append(joined, string(b))
				want := upstreamDocs[i]
				if i < len(upstreamDocs)-1 {
					want += "\n"
				}
				same := string(b) == want
				switch {
				case tc.changed != "" && strings.Contains(f, tc.changed):
					if same {
						t.Errorf("%s is unchanged; want the patch applied", filepath.Base(f))
					}
				case !same:
					t.Errorf("%s (%d bytes) differs from upstream document %d (%d bytes)", filepath.Base(f), len(b), i+1, len(want))
				}
			}
			if tc.changed == "" {
				if got := "---\n" + strings.Join(joined, "---\n"); got != string(data) {
					t.Errorf("stored documents joined = %d bytes, want the upstream file's %d bytes", len(got), len(data))
				}
			}
		})
	}
}

// BenchmarkKubevirtWrap measures the manifest path on the upstream KubeVirt
// operator manifest (about 500 kB): split, one patch on the operator
// Deployment, one json6902 patch on the 467 kB CRD (anchors resolved,
// re-serialized), wrap.
func BenchmarkKubevirtWrap(b *testing.B) {
	data := upstreamFixture(b, "kubevirt-operator-v1.9.0.yaml")
	ps := []recipe.Patch{
		{Kind: "Deployment", Name: "virt-operator", Merge: map[string]any{"spec": map[string]any{"replicas": 3}}},
		{Kind: "CustomResourceDefinition", JSON6902: []recipe.JSONPatchOp{{Op: "add", Path: "/metadata/labels/bench", Value: []byte(`"x"`)}}},
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		objs, err := Split("kubevirt.yaml", data)
		if err != nil {
			b.Fatal(err)
		}
		if err := Apply(objs, ps); err != nil {
			b.Fatal(err)
		}
		if err := Wrap(filepath.Join(b.TempDir(), "c"), "kubevirt", objs, WrapOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
