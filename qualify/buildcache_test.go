package qualify

import (
	"errors"
	"io"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"sigs.k8s.io/yaml"
)

// TestBuiltManifests: a manifest is built by Helm once per validation
// mode while the mapper maps its kinds as before; what is given again is
// an equal copy that changes to what was given before do not reach; a
// kind the mapper no longer maps (a CRD removed) or maps elsewhere is
// built anew, and a failed build is not remembered.
func TestBuiltManifests(t *testing.T) {
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	const (
		cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}\ndata: {k: v}\n"
		wd = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: ns}\nspec: {size: 1}\n"
	)
	type step struct {
		manifest string
		validate bool
		// mapper changes before the step
		unmapWidget, remapWidget bool
		fail                     bool // Helm's build fails
		wantBuilds               int  // Helm's builds so far
		wantErr                  bool
		mutate                   bool // change what this step gets
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"the same manifest: built once", []step{{manifest: cm, wantBuilds: 1}, {manifest: cm, wantBuilds: 1}, {manifest: cm, wantBuilds: 1}}},
		{"another validation: built again", []step{{manifest: cm, wantBuilds: 1}, {manifest: cm, validate: true, wantBuilds: 2}, {manifest: cm, validate: true, wantBuilds: 2}}},
		{"another manifest: built", []step{{manifest: cm, wantBuilds: 1}, {manifest: wd, wantBuilds: 2}, {manifest: cm + "---\n" + wd, wantBuilds: 3}}},
		{"what was given changed: not in the next copy", []step{{manifest: cm, wantBuilds: 1, mutate: true}, {manifest: cm, wantBuilds: 1, mutate: true}, {manifest: cm, wantBuilds: 1}}},
		{"a kind no longer mapped: built again, Helm's error", []step{{manifest: wd, wantBuilds: 1}, {manifest: wd, unmapWidget: true, wantBuilds: 2, fail: true, wantErr: true}}},
		{"a kind mapped to another resource: built again", []step{{manifest: cm + "---\n" + wd, wantBuilds: 1}, {manifest: cm + "---\n" + wd, remapWidget: true, wantBuilds: 2}, {manifest: cm + "---\n" + wd, wantBuilds: 2}}},
		{"a failed build: not remembered", []step{{manifest: cm, fail: true, wantBuilds: 1, wantErr: true}, {manifest: cm, wantBuilds: 2}, {manifest: cm, wantBuilds: 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mapper := meta.NewDefaultRESTMapper(nil)
			mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
			mapper.Add(widget, meta.RESTScopeNamespace)
			var builds int
			var fail bool
			b := &builtManifests{mapper: mapper, build: func(r io.Reader, _ bool) (kube.ResourceList, error) {
				builds++
				if fail {
					return nil, errors.New("no matches for kind")
				}
				data, err := io.ReadAll(r)
				if err != nil {
					return nil, err
				}
				var list kube.ResourceList
				for _, doc := range strings.Split(string(data), "---\n") {
					u := &unstructured.Unstructured{}
					if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
						return nil, err
					}
					m, err := mapper.RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
					if err != nil {
						return nil, err
					}
					list = append(list, &resource.Info{Mapping: m, Namespace: u.GetNamespace(), Name: u.GetName(), Object: u})
				}
				return list, nil
			}}
			var first map[string]kube.ResourceList
			for i, s := range tc.steps {
				if s.unmapWidget {
					m := meta.NewDefaultRESTMapper(nil)
					m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
					mapper = m
					b.mapper = m
				}
				if s.remapWidget {
					m := meta.NewDefaultRESTMapper(nil)
					m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
					m.AddSpecific(widget, widget.GroupVersion().WithResource("gadgets"), widget.GroupVersion().WithResource("gadget"), meta.RESTScopeNamespace)
					mapper = m
					b.mapper = m
				}
				fail = s.fail
				got, err := b.Build(strings.NewReader(s.manifest), s.validate)
				if (err != nil) != s.wantErr {
					t.Fatalf("step %d: error %v, want error %v", i, err, s.wantErr)
				}
				if builds != s.wantBuilds {
					t.Fatalf("step %d: Helm built %d times, want %d", i, builds, s.wantBuilds)
				}
				if err != nil {
					continue
				}
				// what a fresh build gives
				fail = false
				n := builds
				want, err := b.build(strings.NewReader(s.manifest), s.validate)
				builds = n
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("step %d: %d objects, a build gives %d", i, len(got), len(want))
				}
				for j := range got {
					if !equality.Semantic.DeepEqual(got[j].Object, want[j].Object) || got[j].Mapping.Resource != want[j].Mapping.Resource || got[j].Name != want[j].Name || got[j].Namespace != want[j].Namespace {
						t.Errorf("step %d: object %d is %v (%v), a build gives %v (%v)", i, j, got[j].Object, got[j].Mapping.Resource, want[j].Object, want[j].Mapping.Resource)
					}
				}
				if first == nil {
					first = map[string]kube.ResourceList{}
				}
				if prev, ok := first[s.manifest]; ok && len(prev) > 0 && prev[0].Object == got[0].Object {
					t.Errorf("step %d: the same object given twice", i)
				}
				first[s.manifest] = got
				if s.mutate {
					u := got[0].Object.(*unstructured.Unstructured)
					u.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "Helm"})
					unstructured.RemoveNestedField(u.Object, "data")
				}
			}
		})
	}
}
