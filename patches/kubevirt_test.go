package patches

import (
	"os"
	"path/filepath"
	"testing"

	"kbuild.dev/kbuild/builder/recipe"
	"sigs.k8s.io/kustomize/kyaml/yaml"
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

// upstreamFixture reads a file of ../shared/fixtures/upstream beside the
// repository root, skipping the test when it is absent.
func upstreamFixture(t *testing.T, name string) []byte {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("repository root not found")
		}
		dir = parent
	}
	data, err := os.ReadFile(filepath.Join(dir, "..", "shared", "fixtures", "upstream", name))
	if os.IsNotExist(err) {
		t.Skipf("fixture %s absent", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}
