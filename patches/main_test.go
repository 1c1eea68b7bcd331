package patches

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with the golden file, or rewrites it with -update.
func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v; run go test ./patches -update to create it", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", file, got, want)
	}
}

// splitFile reads and splits a testdata file.
func splitFile(t *testing.T, file string) []*Object {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Split(filepath.Base(file), data)
	if err != nil {
		t.Fatalf("Split(%s) = %v", file, err)
	}
	return objs
}

// stream serializes objects as one multi-document YAML stream.
func stream(t *testing.T, objs []*Object) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, o := range objs {
		data, err := o.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return b.Bytes()
}

// ids lists objects as KIND/NAME@ORIGIN.
func ids(objs []*Object) string {
	var s []string
	for _, o := range objs {
		s = append(s, o.Kind()+"/"+o.Name()+"@"+o.Origin())
	}
	return strings.Join(s, " ")
}

// renderChart loads the chart in dir and renders it with Helm's engine,
// returning the output of templates/manifests.yaml.
func renderChart(t *testing.T, dir string) string {
	t.Helper()
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatalf("loader.Load(%s) = %v", dir, err)
	}
	vals, err := chartutil.ToRenderValues(ch, map[string]any{}, chartutil.ReleaseOptions{Name: "rel", Namespace: "ns"}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatalf("engine.Render = %v", err)
	}
	return out[ch.Name()+"/"+templateFile]
}

// errMatch checks err against a wanted substring ("" wants no error).
func errMatch(t *testing.T, err error, want string) bool {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("error = nil, want one containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error = %q, want it to contain %q", err, want)
	}
	return err != nil
}
