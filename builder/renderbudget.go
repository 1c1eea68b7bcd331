package builder

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"runtime/metrics"
	"sort"
	"strings"
	"syscall"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

// Limits of one chart's rendering. Real charts render in well under a
// second and a few MiB; a template such as {{ repeat 1500000000 "x" }} or
// {{ range until 3000000 }} is stopped by one of these.
const (
	// RenderTimeout bounds the rendering of one chart.
	RenderTimeout = 20 * time.Second
	// RenderOutputBudget bounds the bytes all templates of one chart render
	// to.
	RenderOutputBudget = 64 << 20
	// RenderMemory bounds the memory of the rendering process: a watchdog
	// ends it when the Go runtime holds more. A single allocation larger
	// than what the process may map (ulimit -v) ends it at once.
	RenderMemory = 512 << 20
)

// renderTimeout is RenderTimeout, lowered by the fuzz target (a fuzzed
// input must finish within the fuzzer's 10 seconds).
var renderTimeout = RenderTimeout

// renderChildEnv marks the child process that renders a chart.
const renderChildEnv = "KBUILD_RENDER_CHILD"

// ErrRenderBudget is wrapped by the error of a chart whose rendering ran
// past RenderTimeout, RenderOutputBudget or RenderMemory.
var ErrRenderBudget = errors.New("chart rendering exceeded its budget")

// Any binary that links this package (kbuild, its test binaries) becomes
// the rendering child when started with renderChildEnv set: Render runs
// os.Executable() so, before main or the tests start.
func init() {
	if os.Getenv(renderChildEnv) == "" {
		return
	}
	if err := renderChild(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// renderRequest is what the parent sends the child.
type renderRequest struct {
	Archive     []byte
	Namespace   string
	KubeVersion string
	// Timeout is the parent's deadline; the child ends itself a little
	// after it even if the parent could not kill it.
	Timeout time.Duration
}

// renderMessage is one message of the child: a template it starts, one it
// rendered, an error, or the end.
type renderMessage struct {
	Start string
	Name  string
	Out   string
	Err   string
	Done  bool
}

// renderIsolated renders the chart archive data in a child process (this
// executable) and returns each template's output. Templates are rendered
// one at a time, so when the child exceeds RenderTimeout, RenderMemory or
// RenderOutputBudget the error names the template that was rendering.
// kube is the Kubernetes version the templates see (see renderValues).
func renderIsolated(data []byte, chartName, namespace, kube string) (map[string]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("chart %s: render: %w", chartName, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), renderTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), renderChildEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var req bytes.Buffer
	if err := gob.NewEncoder(&req).Encode(renderRequest{Archive: data, Namespace: namespace, KubeVersion: kube, Timeout: renderTimeout}); err != nil {
		return nil, err
	}
	cmd.Stdin = &req
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &stderr, n: 64 << 10}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("chart %s: start the rendering process: %w", chartName, err)
	}
	out := map[string]string{}
	current, size := "", 0
	var childErr string
	done := false
	dec := gob.NewDecoder(stdout)
	for {
		var m renderMessage
		if err := dec.Decode(&m); err != nil {
			break
		}
		switch {
		case m.Start != "":
			current = m.Start
		case m.Err != "":
			childErr = m.Err
		case m.Done:
			done = true
		default:
			size += len(m.Out)
			out[m.Name] = m.Out
		}
		if size > RenderOutputBudget {
			cancel()
			break
		}
	}
	io.Copy(io.Discard, stdout)
	werr := cmd.Wait()
	where := fmt.Sprintf("chart %s: render", chartName)
	if current != "" {
		where = fmt.Sprintf("chart %s: template %s", chartName, current)
	}
	switch {
	case size > RenderOutputBudget:
		return nil, fmt.Errorf("%s: output passed the budget of %d MiB: %w", where, RenderOutputBudget>>20, ErrRenderBudget)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s: still rendering after %s: %w", where, renderTimeout, ErrRenderBudget)
	case childErr != "":
		return nil, fmt.Errorf("chart %s: %s", chartName, childErr)
	case strings.Contains(stderr.String(), "out of memory") || strings.Contains(stderr.String(), "cannot allocate memory"):
		return nil, fmt.Errorf("%s: needed more than %d MiB of memory: %w", where, RenderMemory>>20, ErrRenderBudget)
	case werr != nil || !done:
		return nil, fmt.Errorf("%s: the rendering process failed: %v; it said: %s", where, werr, head(stderr.String(), 2000))
	}
	return out, nil
}

// renderChild is the child's side: it watches its own memory, reads a
// renderRequest from in and writes renderMessages to w. It inherits the
// parent's limits (ulimit -v); a single allocation over them ends it at
// once, which the parent reports as the memory budget.
func renderChild(in io.Reader, w io.Writer) error {
	var req renderRequest
	if err := gob.NewDecoder(in).Decode(&req); err != nil {
		return err
	}
	go watch(req.Timeout+time.Second, os.Getppid())
	enc := gob.NewEncoder(w)
	ch, err := loader.LoadArchive(bytes.NewReader(req.Archive))
	if err != nil {
		return enc.Encode(renderMessage{Err: "load chart: " + err.Error()})
	}
	if err := deterministicTemplates(ch); err != nil {
		return enc.Encode(renderMessage{Err: err.Error()})
	}
	size := 0
	for _, name := range templateNames(ch, "") {
		if err := enc.Encode(renderMessage{Start: name}); err != nil {
			return err
		}
		vals, err := renderValues(ch, req.Namespace, req.KubeVersion)
		if err != nil {
			return enc.Encode(renderMessage{Err: err.Error()})
		}
		out, err := renderTemplate(ch, name, vals)
		if err != nil {
			return enc.Encode(renderMessage{Err: "render: " + err.Error()})
		}
		for n, o := range out {
			size += len(o)
			if size > RenderOutputBudget {
				return enc.Encode(renderMessage{Start: name}) // the parent reports the budget
			}
			if err := enc.Encode(renderMessage{Name: n, Out: o}); err != nil {
				return err
			}
		}
	}
	return enc.Encode(renderMessage{Done: true})
}

// memoryExceeded is what the child prints when the watchdog ends it.
const memoryExceeded = "out of memory: over the rendering budget"

// watch ends the child when the runtime holds more than RenderMemory, when
// it outlives timeout, or when its parent is gone (kbuild was killed).
func watch(timeout time.Duration, parent int) {
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	end := time.Now().Add(timeout)
	for now := range time.Tick(5 * time.Millisecond) {
		if now.After(end) || os.Getppid() != parent {
			os.Exit(4)
		}
		metrics.Read(samples)
		if samples[0].Value.Uint64()-samples[1].Value.Uint64() > RenderMemory {
			fmt.Fprintln(os.Stderr, memoryExceeded)
			os.Exit(3)
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

// renderTemplate renders the template name of ch alone (see only), with
// random seeds of its own (see randomSeeds).
func renderTemplate(ch *chart.Chart, name string, vals chartutil.Values) (map[string]string, error) {
	return engine.RenderWithClientProvider(only(ch, "", name), vals, newRandomSeeds(name))
}

// only returns a copy of the chart tree in which every executed template
// but keep is renamed into a partial: still parsed (its defines stay
// available) but not executed.
func only(ch *chart.Chart, parent, keep string) *chart.Chart {
	prefix := path.Join(parent, ch.Name())
	cp := *ch
	cp.Templates = make([]*chart.File, len(ch.Templates))
	for i, t := range ch.Templates {
		cp.Templates[i] = t
		if full := path.Join(prefix, t.Name); full != keep && !strings.HasPrefix(path.Base(t.Name), "_") {
			cp.Templates[i] = &chart.File{Name: path.Join(path.Dir(t.Name), "_kbuild-skip-"+path.Base(t.Name)), Data: t.Data}
		}
	}
	deps := ch.Dependencies()
	copies := make([]*chart.Chart, len(deps))
	for i, d := range deps {
		copies[i] = only(d, path.Join(prefix, "charts"), keep)
	}
	cp.SetDependencies(copies...)
	return &cp
}

// limitedBuffer keeps the first n bytes written to it.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func head(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
