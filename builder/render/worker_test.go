package render

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/engine"
)

// packChart packs files as a chart named demo, with a Chart.yaml and a
// values.yaml of replicas: 2 unless files has its own.
func packChart(t *testing.T, files map[string]string) []byte {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{"Chart.yaml": "apiVersion: v2\nname: demo\nversion: 1.0.0\n", "values.yaml": "replicas: 2\n"}
	for k, v := range files {
		all[k] = v
	}
	writeChart(t, dir, all)
	return packDir(t, dir, "demo")
}

// renderChart packs files as a chart named demo (see packChart) and
// renders it.
func renderChart(t *testing.T, files map[string]string) (*Rendered, error) {
	t.Helper()
	return Render(packChart(t, files), "ns")
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
			if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "chart demo: template "+tc.want) {
				t.Fatalf("Render(%s) = %v, want ErrBudget naming the template (%q)", tc.name, err, tc.want)
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
		r, err := Render(packDir(t, dir, "demo"), "ns")
		if err == nil && r == nil {
			t.Fatal("Render returned neither objects nor an error")
		}
		if err != nil && !strings.HasPrefix(err.Error(), "chart demo: ") && !strings.HasPrefix(err.Error(), "load chart: ") {
			t.Fatalf("Render error does not name the chart: %v", err)
		}
	})
}

// TestRenderWorkerRestarts: one worker renders chart after chart; a
// template error keeps it; a chart that breaks a budget (memory, time,
// output) gets its clear error, the worker is killed, and the next chart
// renders in a fresh one; a kept worker killed from outside while idle is
// replaced without failing the next chart.
func TestRenderWorkerRestarts(t *testing.T) {
	pool := newWorkerPool(1)
	defer func(p *workerPool, d time.Duration) { pool.close(); renderWorkers, renderTimeout = p, d }(renderWorkers, renderTimeout)
	renderWorkers = pool

	good := map[string]string{"templates/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a-{{ .Release.Namespace }}}\n"}
	renderGood := func(step string) {
		t.Helper()
		r, err := renderChart(t, good)
		if err != nil {
			t.Fatalf("%s: Render(good chart) = %v", step, err)
		}
		if len(r.Objects) != 1 || r.Objects[0]["metadata"].(map[string]any)["name"] != "a-ns" {
			t.Fatalf("%s: Render(good chart) objects = %v, want the ConfigMap a-ns", step, r.Objects)
		}
	}
	wantStarted := func(step string, n int64) {
		t.Helper()
		if got := pool.started.Load(); got != n {
			t.Fatalf("%s: workers started = %d, want %d", step, got, n)
		}
	}

	renderGood("first chart")
	renderGood("second chart")
	wantStarted("two good charts", 1)

	_, err := renderChart(t, map[string]string{"templates/bad.yaml": `{{ fail "refused on purpose" }}`})
	if err == nil || !strings.Contains(err.Error(), "refused on purpose") || errors.Is(err, ErrBudget) {
		t.Fatalf("Render(failing template) = %v, want the template's own error", err)
	}
	renderGood("after a template error")
	wantStarted("a template error", 1)

	started := int64(1)
	for _, tc := range []struct {
		name, template string
		timeout        time.Duration
		want           string
	}{
		{"memory", `{{ repeat 1500000000 "x" }}`, Timeout, "needed more than 512 MiB of memory"},
		{"time", "{{ range until 200000 }}{{ range until 200000 }}{{ end }}{{ end }}", 3 * time.Second, "still rendering after 3s"},
		{"output", "{{ range until 70 }}{{ repeat 1048576 \"z\" }}\n{{ end }}", Timeout, "output passed the budget of 64 MiB"},
	} {
		renderTimeout = tc.timeout
		_, err := renderChart(t, map[string]string{"templates/bomb.yaml": tc.template})
		renderTimeout = Timeout
		if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "template demo/templates/bomb.yaml: ") || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s bomb: Render = %v, want ErrBudget naming the template and %q", tc.name, err, tc.want)
		}
		renderGood("after the " + tc.name + " bomb")
		started++
		wantStarted("after the "+tc.name+" bomb", started)
	}

	pool.mu.Lock()
	idle := pool.idle[0]
	pool.mu.Unlock()
	idle.kill()
	renderGood("after the idle worker was killed")
	wantStarted("after the idle worker was killed", started+1)
}

// TestRenderIncludesTemplateFile: a template that includes another
// template file by its name, as charts do for a checksum of their
// ConfigMap, renders as Helm renders it, although each template renders
// alone.
func TestRenderIncludesTemplateFile(t *testing.T) {
	files := map[string]string{
		"templates/_helpers.tpl":    `{{ define "demo.labels" }}app: demo{{ end }}`,
		"templates/configmap.yaml":  "{{ define \"demo.inner\" }}inner{{ end }}apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n  labels: {{ include \"demo.labels\" . | nindent 4 }}\ndata: {replicas: \"{{ .Values.replicas }}\"}\n",
		"templates/deploy.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deploy\n  annotations:\n    checksum/config: {{ include (print $.Template.BasePath \"/configmap.yaml\") . | sha256sum }}\n    inner: {{ include \"demo.inner\" . }}\n",
		"templates/empty.yaml":      "{{/* nothing */}}",
		"templates/uses-empty.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: uses-empty\n  annotations: {empty: \"{{ include (print $.Template.BasePath \"/empty.yaml\") . }}\"}\n",
	}
	r, err := renderChart(t, files)
	if err != nil {
		t.Fatalf("Render = %v", err)
	}
	ch, err := loader.LoadArchive(bytes.NewReader(packChart(t, files)))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := renderValues(ch, "ns", DefaultKubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	helm, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatal(err)
	}
	want, err := decodeDocuments(helm["demo/templates/deploy.yaml"])
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	for _, o := range r.Objects {
		if o["metadata"].(map[string]any)["name"] == "deploy" {
			got = o
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want[0]) {
		t.Errorf("deploy.yaml rendered\n%v\nHelm renders\n%v", got, want[0])
	}
	if len(r.Objects) != 3 {
		t.Errorf("rendered %d objects, want 3 (config, deploy, uses-empty)", len(r.Objects))
	}
}

// TestRenderWorkerCannotStart: a rendering worker that dies before it is
// ready (here under ulimit -v 700000 KiB, below what the Go runtime needs
// to start: "runtime: out of memory") is reported as a process that did
// not start, never as a chart over its memory budget.
func TestRenderWorkerCannotStart(t *testing.T) {
	pool := newWorkerPool(1)
	defer func(p *workerPool, c func(string) *exec.Cmd) { pool.close(); renderWorkers, workerCommand = p, c }(renderWorkers, workerCommand)
	renderWorkers = pool
	workerCommand = func(exe string) *exec.Cmd {
		return exec.Command("sh", "-c", `ulimit -v 700000 && exec "$0"`, exe)
	}
	_, err := renderChart(t, map[string]string{"templates/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
	if !errors.Is(err, ErrWorkerStart) || errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "chart demo: the rendering process did not start") || !strings.Contains(err.Error(), "ulimit -v") {
		t.Fatalf("Render with a worker that cannot start = %v, want ErrWorkerStart, not ErrBudget", err)
	}
}

// TestNoWorkerMain: a process started as a rendering worker whose main
// does not call WorkerMain (it runs on as the program it is) starts no
// worker of its own when it renders, so a missing call cannot start
// processes without end; the error says what to do.
func TestNoWorkerMain(t *testing.T) {
	pool := newWorkerPool(1)
	defer func(p *workerPool) { pool.close(); renderWorkers = p }(renderWorkers)
	renderWorkers = pool
	t.Setenv(renderChildEnv, "1")
	_, err := renderChart(t, map[string]string{"templates/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
	if !errors.Is(err, ErrNoWorkerMain) || !strings.Contains(err.Error(), "render.WorkerMain") {
		t.Fatalf("Render in a worker without WorkerMain = %v, want ErrNoWorkerMain", err)
	}
}
