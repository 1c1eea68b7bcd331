package patches

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	templ := []string{
		`quoted: "{{ .Values.notHelm }}"`,
		"hello {{ .Release.Name }}",
		"{{- range .Items }}{{ . }}{{ end }}",
		`description: "Set {{ .spec.size }} to scale."`,
	}
	for _, tc := range []struct {
		name      string
		opts      WrapOptions
		wantFiles []string
		// rendered says whether templ[3] (in the CRD) is in the rendered
		// template output.
		crdRendered bool
	}{
		{
			name: "all in templates",
			wantFiles: []string{
				"Chart.yaml",
				"files/manifests/0001-configmap-tmpl.yaml",
				"files/manifests/0002-deployment-web.yaml",
				"files/manifests/0003-service-web.yaml",
				"files/manifests/0004-customresourcedefinition-widgets.example.com.yaml",
				"files/manifests/0005-clusterrole-system-widgets-editor.yaml",
				"templates/manifests.yaml",
				"values.yaml",
			},
			crdRendered: true,
		},
		{
			name: "crds dir",
			opts: WrapOptions{CRDsDir: true},
			wantFiles: []string{
				"Chart.yaml",
				"crds/0004-customresourcedefinition-widgets.example.com.yaml",
				"files/manifests/0001-configmap-tmpl.yaml",
				"files/manifests/0002-deployment-web.yaml",
				"files/manifests/0003-service-web.yaml",
				"files/manifests/0005-clusterrole-system-widgets-editor.yaml",
				"templates/manifests.yaml",
				"values.yaml",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// multi.yaml with CRLF line ends, as some upstreams ship.
			data, err := os.ReadFile("testdata/split/multi.yaml")
			if err != nil {
				t.Fatal(err)
			}
			objs, err := Split("multi.yaml", bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")))
			if err != nil {
				t.Fatal(err)
			}
			objs = append(objs, splitFile(t, "testdata/wrap/crd.yaml")...)
			dst := filepath.Join(t.TempDir(), "chart")
			if err := Wrap(dst, "demo", objs, tc.opts); err != nil {
				t.Fatalf("Wrap = %v", err)
			}
			if got := tree(t, dst); !slices.Equal(got, tc.wantFiles) {
				t.Errorf("Wrap wrote %q, want %q", got, tc.wantFiles)
			}
			chartYAML, _ := os.ReadFile(filepath.Join(dst, "Chart.yaml"))
			if want := "apiVersion: v2\nname: demo\nversion: 0.0.0\ntype: application\n"; string(chartYAML) != want {
				t.Errorf("Chart.yaml = %q, want %q", chartYAML, want)
			}
			values, _ := os.ReadFile(filepath.Join(dst, "values.yaml"))
			if string(values) != "{}\n" {
				t.Errorf("values.yaml = %q, want {}", values)
			}

			// Same input, same bytes.
			again := filepath.Join(t.TempDir(), "chart")
			if err := Wrap(again, "demo", objs, tc.opts); err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.wantFiles {
				a, _ := os.ReadFile(filepath.Join(dst, f))
				b, _ := os.ReadFile(filepath.Join(again, f))
				if string(a) != string(b) {
					t.Errorf("%s differs between two Wrap calls", f)
				}
			}

			out := renderChart(t, dst)
			for i, s := range templ {
				if want := i < 3 || tc.crdRendered; strings.Contains(out, s) != want {
					t.Errorf("rendered output contains %q = %v, want %v:\n%s", s, !want, want, out)
				}
			}
			rendered, err := Split("rendered", []byte(out))
			if err != nil {
				t.Fatalf("Split(rendered) = %v", err)
			}
			wantKinds := "ConfigMap/tmpl Deployment/web Service/web CustomResourceDefinition/widgets.example.com ClusterRole/system:widgets/editor"
			if !tc.crdRendered {
				wantKinds = "ConfigMap/tmpl Deployment/web Service/web ClusterRole/system:widgets/editor"
			}
			if got := names(rendered); got != wantKinds {
				t.Errorf("rendered objects = %s, want %s", got, wantKinds)
			}
			golden(t, filepath.Join("testdata/wrap", strings.ReplaceAll(tc.name, " ", "-")+".rendered.yaml"), []byte(out))
		})
	}
}

func TestWrapErrors(t *testing.T) {
	objs := splitFile(t, "testdata/split/multi.yaml")
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "stale.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dst, chart string
		objs             []*Object
		wantErr          string
	}{
		{name: "dst not empty", dst: full, chart: "demo", objs: objs, wantErr: "directory is not empty"},
		{name: "chart name with a slash", chart: "../demo", objs: objs, wantErr: `wrap chart "../demo": validation: chart.metadata.name "../demo" is invalid`},
		{name: "empty chart name", chart: "", objs: objs, wantErr: "chart.metadata.name is required"},
		{name: "no objects", chart: "demo", wantErr: "no objects to wrap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := tc.dst
			if dst == "" {
				dst = filepath.Join(t.TempDir(), "chart")
			}
			errMatch(t, Wrap(dst, tc.chart, tc.objs, WrapOptions{}), tc.wantErr)
		})
	}
}

// tree lists the regular files under dir as sorted slash paths.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}
