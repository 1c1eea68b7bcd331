package builder

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// renderChart packs files as a chart named demo and renders it.
func renderChart(t *testing.T, files map[string]string) (*Rendered, error) {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{"Chart.yaml": "apiVersion: v2\nname: demo\nversion: 1.0.0\n", "values.yaml": "replicas: 2\n"}
	for k, v := range files {
		all[k] = v
	}
	writeChart(t, dir, all)
	a, err := Pack(dir, "demo", "1.0.0", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	return Render(a.Data, "ns")
}

// TestRenderBudget: a template that would use gigabytes (repeat) or
// render without end (range until) is stopped in its child process, and
// the error names the template; a chart with partials, defines in
// executed files and a subchart renders as before.
func TestRenderBudget(t *testing.T) {
	good := map[string]string{
		"templates/_helpers.tpl":      `{{ define "demo.name" }}demo-{{ .Release.Namespace }}{{ end }}`,
		"templates/a.yaml":            "{{ define \"demo.other\" }}other{{ end }}apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ include \"demo.name\" . }}}\ndata: {n: \"{{ .Values.replicas }}\"}\n",
		"templates/b.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ include \"demo.other\" . }}}\n",
		"charts/sub/Chart.yaml":       "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
		"charts/sub/templates/c.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: {{ .Chart.Name }}}\n",
	}
	r, err := renderChart(t, good)
	if err != nil {
		t.Fatalf("Render(good chart) = %v", err)
	}
	var names []string
	for _, o := range r.Objects {
		names = append(names, o["metadata"].(map[string]any)["name"].(string))
	}
	if got := strings.Join(names, ","); got != "sub,demo-ns,other" {
		t.Errorf("rendered objects = %s, want sub,demo-ns,other", got)
	}

	for _, tc := range []struct {
		name, template, want string
	}{
		{"repeat", `{{ repeat 1500000000 "x" }}`, "demo/templates/bomb.yaml: "},
		{"range until", "{{ range until 3000000 }}- {{ repeat 100 \"y\" }}\n{{ end }}", "demo/templates/bomb.yaml: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"templates/a.yaml": good["templates/a.yaml"], "templates/_helpers.tpl": good["templates/_helpers.tpl"], "templates/bomb.yaml": tc.template}
			_, err := renderChart(t, files)
			if !errors.Is(err, ErrRenderBudget) || !strings.Contains(err.Error(), "chart demo: template "+tc.want) {
				t.Fatalf("Render(%s) = %v, want ErrRenderBudget naming the template (%q)", tc.name, err, tc.want)
			}
		})
	}
}

// FuzzRenderBudget renders a chart whose one template is the fuzzed text:
// whatever the template does, Render returns (an error or objects) within
// the render budget and never takes the calling process down.
func FuzzRenderBudget(f *testing.F) {
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}}\n")
	f.Add(`{{ repeat 100000000 "x" }}`)
	f.Add("{{ range until 100000 }}- {{ . }}\n{{ end }}")
	f.Add(`{{ define "a" }}{{ include "a" . }}{{ end }}{{ include "a" . }}`)
	f.Add(`{{ fail "no" }}`)
	dir := f.TempDir()
	defer func(d time.Duration) { renderTimeout = d }(renderTimeout)
	renderTimeout = 4 * time.Second
	f.Fuzz(func(t *testing.T, template string) {
		writeChart(t, dir, map[string]string{"Chart.yaml": "apiVersion: v2\nname: demo\nversion: 1.0.0\n", "templates/t.yaml": template})
		a, err := Pack(dir, "demo", "1.0.0", time.Unix(0, 0))
		if err != nil {
			return
		}
		r, err := Render(a.Data, "ns")
		if err == nil && r == nil {
			t.Fatal("Render returned neither objects nor an error")
		}
		if err != nil && !strings.HasPrefix(err.Error(), "chart demo: ") && !strings.HasPrefix(err.Error(), "load chart: ") {
			t.Fatalf("Render error does not name the chart: %v", err)
		}
	})
}
