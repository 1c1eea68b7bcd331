package patches

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/releaseutil"
	k8syaml "sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/internal/yamlbound"
	"kbuild.dev/kbuild/recipe"
)

// helmObjects reads rendered template output the way Helm does: split with
// releaseutil.SplitManifests, each document parsed alone by sigs.k8s.io/yaml.
func helmObjects(t *testing.T, out string) []map[string]any {
	t.Helper()
	docs := releaseutil.SplitManifests(out)
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		x, _ := strconv.Atoi(strings.TrimPrefix(a, "manifest-"))
		y, _ := strconv.Atoi(strings.TrimPrefix(b, "manifest-"))
		return x - y
	})
	var objs []map[string]any
	for _, k := range keys {
		var o map[string]any
		if err := k8syaml.Unmarshal([]byte(docs[k]), &o); err != nil {
			t.Fatalf("Helm cannot read rendered %s: %v\n%s", k, err, docs[k])
		}
		if o != nil {
			objs = append(objs, o)
		}
	}
	return objs
}

// at returns the value at a JSON pointer-like path of slash-separated keys
// and list indexes, as JSON text ("" when absent).
func at(v any, path string) string {
	for _, k := range strings.Split(strings.Trim(path, "/"), "/") {
		switch t := v.(type) {
		case map[string]any:
			v = t[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(t) {
				return ""
			}
			v = t[i]
		default:
			return ""
		}
	}
	if v == nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// wrapAndRead wraps objs, renders the chart with Helm's engine and reads the
// output as Helm does.
func wrapAndRead(t *testing.T, objs []*Object, opts WrapOptions) (string, []map[string]any) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "chart")
	if err := Wrap(dst, "demo", objs, opts); err != nil {
		t.Fatalf("Wrap = %v", err)
	}
	return dst, helmObjects(t, renderChart(t, dst))
}

func TestPatchAnchoredCRD(t *testing.T) {
	const (
		alpha     = "/spec/versions/0"
		beta      = "/spec/versions/1"
		retention = "/schema/openAPIV3Schema/properties/spec/properties/retention"
		schedule  = "/schema/openAPIV3Schema/properties/spec/properties/schedule"
	)
	for _, tc := range []struct {
		name string
		ops  []recipe.JSONPatchOp
		want map[string]string // path -> JSON value ("" absent)
		same bool              // stored as upstream wrote it
	}{
		{name: "unpatched", same: true, want: map[string]string{
			alpha + retention + "/minimum": "1", beta + retention + "/minimum": "1",
			beta + "/additionalPrinterColumns/0/name": `"Phase"`,
		}},
		{name: "test only", same: true, ops: []recipe.JSONPatchOp{{Op: "test", Path: beta + retention + "/minimum", Value: json.RawMessage("1")}},
			want: map[string]string{beta + retention + "/minimum": "1"}},
		{name: "on the anchor", ops: []recipe.JSONPatchOp{{Op: "replace", Path: alpha + retention + "/minimum", Value: json.RawMessage("0")}},
			want: map[string]string{alpha + retention + "/minimum": "0", beta + retention + "/minimum": "1"}},
		{name: "through the alias", ops: []recipe.JSONPatchOp{{Op: "add", Path: beta + schedule + "/pattern", Value: json.RawMessage(`"^@daily$"`)}},
			want: map[string]string{beta + schedule + "/pattern": `"^@daily$"`, alpha + schedule + "/pattern": "", beta + schedule + "/type": `"string"`}},
		{name: "remove through the alias", ops: []recipe.JSONPatchOp{{Op: "remove", Path: beta + "/additionalPrinterColumns/0"}},
			want: map[string]string{beta + "/additionalPrinterColumns": "[]", alpha + "/additionalPrinterColumns/0/name": `"Phase"`}},
		{name: "nested anchor", ops: []recipe.JSONPatchOp{{Op: "remove", Path: beta + retention + "/minimum"}},
			want: map[string]string{beta + retention + "/minimum": "", alpha + retention + "/minimum": "1", beta + retention + "/type": `"integer"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := splitFile(t, "testdata/anchors/crd.yaml")
			if tc.ops != nil {
				if err := Apply(objs, []recipe.Patch{{Kind: "CustomResourceDefinition", JSON6902: tc.ops}}); err != nil {
					t.Fatalf("Apply = %v", err)
				}
			}
			dst, rendered := wrapAndRead(t, objs, WrapOptions{})
			if len(rendered) != 1 {
				t.Fatalf("rendered %d objects, want 1", len(rendered))
			}
			for p, want := range tc.want {
				if got := at(rendered[0], p); got != want {
					t.Errorf("%s = %s, want %s", p, got, want)
				}
			}
			stored, err := os.ReadFile(filepath.Join(dst, "files/manifests/0001-customresourcedefinition-backups.example.com.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			src, _ := os.ReadFile("testdata/anchors/crd.yaml")
			if same := string(stored) == string(src); same != tc.same {
				t.Errorf("stored CRD byte-identical to upstream = %v, want %v", same, tc.same)
			}
		})
	}
}

func TestListSharedAnchors(t *testing.T) {
	src, err := os.ReadFile("testdata/anchors/list.yaml")
	if err != nil {
		t.Fatal(err)
	}
	labels := `{"app.kubernetes.io/name":"backup","app.kubernetes.io/part-of":"backup-operator"}`
	for _, tc := range []struct {
		name    string
		exclude []recipe.Selector
		patches []recipe.Patch
		files   int    // files stored
		raw     bool   // the List is stored as upstream wrote it
		want    string // kinds rendered
	}{
		{name: "intact", files: 1, raw: true, want: "ServiceAccount ConfigMap Service"},
		{name: "anchor holder excluded", exclude: []recipe.Selector{{Kind: "ServiceAccount"}}, files: 2, want: "ConfigMap Service"},
		{name: "alias holder patched", patches: []recipe.Patch{{Kind: "ConfigMap", Merge: map[string]any{"data": map[string]any{"retention": "30"}}}},
			files: 3, want: "ServiceAccount ConfigMap Service"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Split("list.yaml", src)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				if b, _ := o.Bytes(); strings.ContainsAny(string(b), "*&") {
					t.Errorf("item %s keeps an anchor or alias when written alone:\n%s", o, b)
				}
			}
			if objs, err = Exclude(objs, tc.exclude); err != nil {
				t.Fatal(err)
			}
			if err := Apply(objs, tc.patches); err != nil {
				t.Fatal(err)
			}
			dst, rendered := wrapAndRead(t, objs, WrapOptions{})
			files, _ := filepath.Glob(filepath.Join(dst, "files/manifests/*.yaml"))
			if len(files) != tc.files {
				t.Errorf("stored %d files, want %d", len(files), tc.files)
			}
			if tc.raw {
				if b, _ := os.ReadFile(files[0]); string(b) != string(src) {
					t.Errorf("List stored as %q, want upstream's bytes", b)
				}
			}
			var kinds []string
			for _, o := range rendered {
				if o["kind"] == "List" {
					for _, it := range o["items"].([]any) {
						o := it.(map[string]any)
						kinds = append(kinds, o["kind"].(string))
						checkLabels(t, o, labels)
					}
					continue
				}
				kinds = append(kinds, o["kind"].(string))
				checkLabels(t, o, labels)
			}
			if got := strings.Join(kinds, " "); got != tc.want {
				t.Errorf("rendered %s, want %s", got, tc.want)
			}
		})
	}
}

// checkLabels checks that an object carries the shared labels (the Service
// merges one more).
func checkLabels(t *testing.T, o map[string]any, want string) {
	t.Helper()
	got := at(o, "/metadata/labels")
	if o["kind"] == "Service" {
		want = strings.TrimSuffix(want, "}") + `,"app.kubernetes.io/component":"metrics"}`
		var a, b map[string]any
		_ = json.Unmarshal([]byte(got), &a)
		_ = json.Unmarshal([]byte(want), &b)
		if len(a) != len(b) {
			t.Errorf("Service labels = %s, want %s", got, want)
		}
		return
	}
	if got != want {
		t.Errorf("%s labels = %s, want %s", o["kind"], got, want)
	}
}

func TestSplitAliasAcrossDocuments(t *testing.T) {
	data, err := os.ReadFile("testdata/anchors/cross-doc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Split("cross-doc.yaml", data)
	errMatch(t, err, "cross-doc.yaml document 2: yaml: unknown anchor 'labels' referenced; an alias can only refer to an anchor of its own document")
}

// TestResolveAliasesBomb refuses a List whose items expand, through nested
// aliases, into more nodes than any real manifest has: Split refuses it
// with the bound every YAML kbuild reads has (yamlbound), and
// resolveAliases, should a document ever reach it, with its own.
func TestResolveAliasesBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: bomb}\n  data:\n    a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 8; i++ {
		fmt.Fprintf(&b, "    a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	_, err := Split("bomb.yaml", []byte(b.String()))
	if !errors.Is(err, yamlbound.ErrExpansion) {
		t.Errorf("Split(bomb) = %v, want an error wrapping yamlbound.ErrExpansion", err)
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(b.String()), &n); err != nil {
		t.Fatal(err)
	}
	_, err = resolveAliases(&n)
	errMatch(t, err, "aliases expand to more than")
}
