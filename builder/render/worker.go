package render

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"runtime"
	"runtime/metrics"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/template/parse"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"kbuild.dev/kbuild/internal/fault"
	"kbuild.dev/kbuild/internal/tailbuffer"
)

// Limits of one chart's rendering. Real charts render in well under a
// second and a few MiB; a template such as {{ repeat 1500000000 "x" }} or
// {{ range until 3000000 }} is stopped by one of these.
const (
	// Timeout bounds the rendering of one chart.
	Timeout = 20 * time.Second
	// OutputBudget bounds the bytes all templates of one chart render
	// to.
	OutputBudget = 64 << 20
	// Memory bounds the memory of the rendering process: a watchdog
	// ends it when the Go runtime holds more. A single allocation larger
	// than what the process may map (ulimit -v) ends it at once.
	Memory = 512 << 20
)

// renderTimeout is Timeout, lowered by the fuzz target (a fuzzed
// input must finish within the fuzzer's 10 seconds).
var renderTimeout = Timeout

// renderChildEnv marks the child process that renders charts.
const renderChildEnv = "KBUILD_RENDER_CHILD"

// ErrBudget is wrapped by the error of a chart whose rendering ran
// past Timeout, OutputBudget or Memory.
var ErrBudget = fault.New(fault.Refused, "chart rendering exceeded its budget")

// WorkerMain makes this process a rendering worker when Render started it
// (the environment variable KBUILD_RENDER_CHILD is set): it renders one
// chart after another until its standard input closes, then exits, and
// never returns. In any other process it returns at once. Render starts
// workers by running os.Executable(), so every program that renders calls
// WorkerMain first thing: kbuild's main, and TestMain in each test binary
// whose tests render.
func WorkerMain() {
	if os.Getenv(renderChildEnv) == "" {
		return
	}
	if err := renderChild(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// ErrNoWorkerMain is wrapped by the error of Render in a process that was
// started as a rendering worker but did not become one: its main (or
// TestMain) does not call WorkerMain. Such a process starts no worker of
// its own, so a missing call cannot start processes without end.
var ErrNoWorkerMain = errors.New("this program was started as a rendering worker, but its main does not call render.WorkerMain")

// renderRequest is what the parent sends the worker for one chart.
type renderRequest struct {
	Archive     []byte
	Namespace   string
	KubeVersion string
	// Timeout is the parent's deadline; the worker ends itself a little
	// after it even if the parent could not kill it.
	Timeout time.Duration
}

// renderMessage is one message of the worker: a template it starts, one
// it rendered, an error, the output budget passed, or the end of a chart.
type renderMessage struct {
	// Ready is the worker's first message: it started and reads requests.
	Ready  bool
	Start  string
	Name   string
	Out    string
	Err    string
	Budget bool // the output passed OutputBudget in template Start
	Done   bool
	// Held is, with Done, the memory the worker's runtime holds after the
	// chart (see retireAbove).
	Held uint64
}

// retireAbove is the memory a worker may hold after a chart and still
// render the next one. A worker that needed more is ended, so that what a
// large chart left behind does not count against the next chart's
// Memory.
const retireAbove = 64 << 20

// renderWorkers are the rendering processes Render uses: at most
// GOMAXPROCS at once, each kept for the next chart while it stays healthy.
var renderWorkers = newWorkerPool(runtime.GOMAXPROCS(0))

// workerPool starts rendering workers on demand, up to a limit, and keeps
// the healthy ones for the next chart. A worker that broke a budget, died
// or held too much memory is killed and a fresh one started when needed.
type workerPool struct {
	slots   chan struct{} // one token per worker that may be busy
	mu      sync.Mutex
	idle    []*renderWorker
	started atomic.Int64 // workers started, for tests (TestRenderWorkerRestarts)
}

func newWorkerPool(limit int) *workerPool {
	return &workerPool{slots: make(chan struct{}, max(limit, 1))}
}

// get returns an idle worker or starts one, waiting while limit workers
// are busy.
func (p *workerPool) get() (*renderWorker, error) {
	p.slots <- struct{}{}
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return w, nil
	}
	p.mu.Unlock()
	w, err := startWorker()
	if err != nil {
		<-p.slots
		return nil, err
	}
	p.started.Add(1)
	return w, nil
}

// put gives back a worker: kept when healthy, else ended.
func (p *workerPool) put(w *renderWorker, healthy bool) {
	if healthy {
		p.mu.Lock()
		p.idle = append(p.idle, w)
		p.mu.Unlock()
	} else {
		w.stop()
	}
	<-p.slots
}

// StopWorkers ends the idle rendering workers and waits for them, so
// that their CPU time is counted as the caller's (a worker also ends by
// itself when the process that started it exits). Render starts new ones
// as needed.
func StopWorkers() { renderWorkers.close() }

// close ends the idle workers (busy ones end when given back).
func (p *workerPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, w := range idle {
		w.stop()
	}
}

// renderWorker is one rendering process and its pipes. Messages are gob
// streams in both directions, one renderRequest and its renderMessages
// per chart.
type renderWorker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	enc    *gob.Encoder
	dec    *gob.Decoder
	stderr *tailbuffer.Buffer
	// renders counts the charts rendered; answered is whether the worker
	// sent anything for the current one.
	renders  int
	answered bool
}

// ErrWorkerStart is wrapped by the error of a rendering process that did
// not start (no chart was given to it): a limit of the machine, such as
// ulimit -v below what a Go program needs to start, not the chart's fault.
var ErrWorkerStart = errors.New("the rendering process did not start")

// workerCommand is the command of a rendering worker: this executable (a
// variable for tests, which start it under a limit).
var workerCommand = func(exe string) *exec.Cmd { return exec.Command(exe) }

// startWorker starts this executable as a rendering worker in its own
// process group (so that killing it kills all it started), and waits for
// it to say it is ready: a worker that dies first is reported as not
// started (ErrWorkerStart), never as a chart over its budget.
func startWorker() (*renderWorker, error) {
	if os.Getenv(renderChildEnv) != "" {
		return nil, ErrNoWorkerMain
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start the rendering process: %w", err)
	}
	cmd := workerCommand(exe)
	cmd.Env = append(os.Environ(), renderChildEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = time.Second
	w := &renderWorker{cmd: cmd, stderr: tailbuffer.New(64 << 10)}
	cmd.Stderr = w.stderr
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the rendering process: %w", err)
	}
	w.enc, w.dec = gob.NewEncoder(w.stdin), gob.NewDecoder(stdout)
	var hello renderMessage
	if err := w.dec.Decode(&hello); err != nil || !hello.Ready {
		werr := w.stop()
		return nil, fmt.Errorf("%w (%v); it said: %s; a Go program needs about 800 MiB of address space to start: check ulimit -v", ErrWorkerStart, werr, head(strings.TrimSpace(w.stderr.String()), 500))
	}
	return w, nil
}

// kill ends the worker's process group at once.
func (w *renderWorker) kill() { _ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL) }

// stop kills the worker and reaps it; it returns the worker's exit error.
func (w *renderWorker) stop() error {
	w.kill()
	_ = w.stdin.Close()
	return w.cmd.Wait()
}

// renderIsolated renders the chart archive data in a rendering worker
// and returns each template's output. Templates are rendered one at a
// time, so when the worker exceeds Timeout, Memory or
// OutputBudget the error names the template that was rendering; the
// worker is then killed and the next chart gets a fresh one. kube is the
// Kubernetes version the templates see (see renderValues).
func renderIsolated(data []byte, chartName, namespace, kube string) (map[string]string, error) {
	return renderWorkers.render(renderRequest{Archive: data, Namespace: namespace, KubeVersion: kube, Timeout: renderTimeout}, chartName)
}

func (p *workerPool) render(req renderRequest, chartName string) (map[string]string, error) {
	for {
		w, err := p.get()
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", chartName, err)
		}
		out, healthy, err := w.render(req, chartName)
		// A kept worker that died while idle (killed from outside) fails
		// before it answers at all: the chart gets a fresh worker.
		retry := err != nil && w.renders > 0 && !w.answered
		w.renders++
		p.put(w, healthy)
		if !retry {
			return out, err
		}
	}
}

// render sends one chart to the worker and reads what it renders, killing
// the worker when it passes req.Timeout. healthy reports whether the
// worker may render the next chart.
func (w *renderWorker) render(req renderRequest, chartName string) (out map[string]string, healthy bool, err error) {
	var timedOut atomic.Bool
	timer := time.AfterFunc(req.Timeout, func() { timedOut.Store(true); w.kill() })
	defer timer.Stop()
	out = map[string]string{}
	current, size := "", 0
	var m renderMessage
	ended := false
	w.answered = false
	if err := w.enc.Encode(req); err == nil {
		for !ended {
			m = renderMessage{}
			if err := w.dec.Decode(&m); err != nil {
				break
			}
			w.answered = true
			if m.Start != "" {
				current = m.Start
			}
			switch {
			case m.Err != "" || m.Budget || m.Done:
				ended = true
			case m.Start != "":
			default:
				size += len(m.Out)
				out[m.Name] = m.Out
			}
			if size > OutputBudget {
				m.Budget, ended = true, true
			}
		}
	}
	where := fmt.Sprintf("chart %s: render", chartName)
	if current != "" {
		where = fmt.Sprintf("chart %s: template %s", chartName, current)
	}
	switch {
	case ended && timer.Stop() && !timedOut.Load():
		// The chart ended within its time: a template error leaves the
		// worker as good as before; a budget passed, not.
		switch {
		case m.Budget:
			return nil, false, fmt.Errorf("%s: output passed the budget of %d MiB: %w", where, OutputBudget>>20, ErrBudget)
		case m.Err != "":
			return nil, true, fmt.Errorf("chart %s: %s", chartName, m.Err)
		}
		return out, m.Held <= retireAbove, nil
	}
	// The worker is gone, or killed for its time: reap it and say why.
	werr := w.stop()
	stderr := w.stderr.String()
	switch {
	case timedOut.Load():
		return nil, false, fmt.Errorf("%s: still rendering after %s: %w", where, req.Timeout, ErrBudget)
	case strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory"):
		return nil, false, fmt.Errorf("%s: needed more than %d MiB of memory: %w", where, Memory>>20, ErrBudget)
	}
	return nil, false, fmt.Errorf("%s: the rendering process failed: %v; it said: %s", where, werr, head(stderr, 2000))
}

// renderChild is the worker's side: it reads renderRequests from in until
// in closes and answers each with renderMessages on w, watching its own
// memory and time while it renders. It inherits the parent's limits
// (ulimit -v); a single allocation over them ends it at once, which the
// parent reports as the memory budget.
func renderChild(in io.Reader, w io.Writer) error {
	dec, enc := gob.NewDecoder(in), gob.NewEncoder(w)
	if err := enc.Encode(renderMessage{Ready: true}); err != nil {
		return err
	}
	parent := os.Getppid()
	for {
		var req renderRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil // the parent is done
			}
			return err
		}
		done := make(chan struct{})
		go watch(req.Timeout+time.Second, parent, done)
		err := renderOne(req, enc)
		close(done)
		if err != nil {
			return err // the parent stopped reading
		}
	}
}

// renderOne renders the chart of req, template by template, onto enc. It
// returns an error only when enc fails.
func renderOne(req renderRequest, enc *gob.Encoder) error {
	ch, err := loader.LoadArchive(bytes.NewReader(req.Archive))
	if err != nil {
		return enc.Encode(renderMessage{Err: "load chart: " + err.Error()})
	}
	if err := deterministicTemplates(ch); err != nil {
		return enc.Encode(renderMessage{Err: err.Error()})
	}
	size := 0
	set := newTemplateSet(ch)
	for _, name := range templateNames(ch, "") {
		if err := enc.Encode(renderMessage{Start: name}); err != nil {
			return err
		}
		vals, err := renderValues(ch, req.Namespace, req.KubeVersion)
		if err != nil {
			return enc.Encode(renderMessage{Err: err.Error()})
		}
		out, err := set.render(name, vals)
		if err != nil {
			return enc.Encode(renderMessage{Err: "render: " + err.Error()})
		}
		for _, n := range slices.Sorted(maps.Keys(out)) {
			size += len(out[n])
			if size > OutputBudget {
				return enc.Encode(renderMessage{Start: name, Budget: true})
			}
			if err := enc.Encode(renderMessage{Name: n, Out: out[n]}); err != nil {
				return err
			}
		}
	}
	return enc.Encode(renderMessage{Done: true, Held: heldMemory()})
}

// memoryExceeded is what the worker prints when the watchdog ends it.
const memoryExceeded = "out of memory: over the rendering budget"

var memorySamples = []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}

// heldMemory is the memory the runtime holds from the system and has not
// given back.
func heldMemory() uint64 {
	s := slices.Clone(memorySamples)
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}

// watch ends the worker when the runtime holds more than Memory,
// when the chart outlives timeout, or when its parent is gone (kbuild was
// killed); it returns when done closes.
func watch(timeout time.Duration, parent int, done <-chan struct{}) {
	end := time.Now().Add(timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			if now.After(end) || os.Getppid() != parent {
				os.Exit(4)
			}
			if heldMemory() > Memory {
				fmt.Fprintln(os.Stderr, memoryExceeded)
				os.Exit(3)
			}
		}
	}
}

// templateNames lists, sorted, the names Helm gives the templates it
// executes (partials, whose base name starts with "_", are not executed).
func templateNames(ch *chart.Chart, parent string) []string {
	prefix := path.Join(parent, ch.Name())
	var names []string
	for _, t := range ch.Templates {
		if !strings.HasPrefix(path.Base(t.Name), "_") {
			names = append(names, path.Join(prefix, t.Name))
		}
	}
	for _, d := range ch.Dependencies() {
		names = append(names, templateNames(d, path.Join(prefix, "charts"))...)
	}
	sort.Strings(names)
	return names
}

// templateSet renders the templates of one chart one at a time (see only).
type templateSet struct {
	ch *chart.Chart
	// skip holds, for every executed template, the partial that stands
	// for it while another one renders (see includable), or nil for one
	// that is left out then: it defines nothing, and no file of the chart
	// names it, so nothing can include it.
	skip map[*chart.File]*chart.File
}

func newTemplateSet(ch *chart.Chart) *templateSet {
	s := &templateSet{ch: ch, skip: map[*chart.File]*chart.File{}}
	var text [][]byte
	collectRaw(ch, &text)
	s.prepare(ch, "", text)
	return s
}

// collectRaw appends the text of every file of the chart tree as it came
// in the archive: templates, values, other files.
func collectRaw(ch *chart.Chart, into *[][]byte) {
	for _, f := range ch.Raw {
		*into = append(*into, f.Data)
	}
	for _, d := range ch.Dependencies() {
		collectRaw(d, into)
	}
}

func (s *templateSet) prepare(ch *chart.Chart, parent string, text [][]byte) {
	prefix := path.Join(parent, ch.Name())
	for _, t := range ch.Templates {
		if strings.HasPrefix(path.Base(t.Name), "_") {
			continue
		}
		data, defines := includable(path.Join(prefix, t.Name), t.Data)
		named := slices.ContainsFunc(text, func(b []byte) bool { return bytes.Contains(b, []byte(path.Base(t.Name))) })
		if defines || named {
			s.skip[t] = &chart.File{Name: path.Join(path.Dir(t.Name), "_kbuild-skip-"+path.Base(t.Name)), Data: data}
		} else {
			s.skip[t] = nil
		}
	}
	for _, d := range ch.Dependencies() {
		s.prepare(d, path.Join(prefix, "charts"), text)
	}
}

// render renders the template name alone, with random seeds of its own
// (see randomSeeds).
func (s *templateSet) render(name string, vals chartutil.Values) (map[string]string, error) {
	return engine.RenderWithClientProvider(s.only(s.ch, "", name), vals, newRandomSeeds(name))
}

// only returns a copy of the chart tree in which every executed template
// but keep is replaced by its partial: still parsed (its defines stay
// available, and so does its body under its own name, for charts that
// include a template file, as in {{ include (print $.Template.BasePath
// "/configmap.yaml") . | sha256sum }}) but not executed. A template that
// defines nothing and that no file names is left out: parsing every
// template for the render of each one was a fifth of a build's time.
func (s *templateSet) only(ch *chart.Chart, parent, keep string) *chart.Chart {
	prefix := path.Join(parent, ch.Name())
	cp := *ch
	cp.Templates = make([]*chart.File, 0, len(ch.Templates))
	for _, t := range ch.Templates {
		skip, executed := s.skip[t]
		switch {
		case !executed || path.Join(prefix, t.Name) == keep:
			cp.Templates = append(cp.Templates, t)
		case skip != nil:
			cp.Templates = append(cp.Templates, skip)
		}
	}
	deps := ch.Dependencies()
	copies := make([]*chart.Chart, len(deps))
	for i, d := range deps {
		copies[i] = s.only(d, path.Join(prefix, "charts"), keep)
	}
	cp.SetDependencies(copies...)
	return &cp
}

// includable returns the text of a partial that stands for the template
// file full: its defines, and its body defined under its own name, so that
// the file can still be included; defines reports whether the file defines
// templates. The text is written back from the parse tree (as
// deterministicTemplates writes), about as long as the file, so the engine
// parses no more than before. Text that does not parse is returned as it
// is (and counts as defining): rendering the file itself reports the error.
func includable(full string, data []byte) (text []byte, defines bool) {
	t := parse.New(full)
	t.Mode = parse.SkipFuncCheck
	trees := map[string]*parse.Tree{}
	if _, err := t.Parse(string(data), "", "", trees); err != nil {
		return data, true
	}
	if _, ok := trees[full]; !ok {
		trees[full] = nil // a file of defines only includes as ""
	}
	var out []byte
	for _, name := range slices.Sorted(maps.Keys(trees)) {
		body := ""
		if tr := trees[name]; tr != nil && tr.Root != nil {
			body = tr.Root.String()
		}
		out = fmt.Appendf(out, "{{define %q}}%s{{end}}", name, body)
	}
	return out, len(trees) > 1
}

func head(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
