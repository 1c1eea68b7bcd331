package builder

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"kbuild.dev/kbuild/patches"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/sources"
)

// manifestExtensions are the files of a manifest source that are wrapped.
var manifestExtensions = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// assembled is a chart ready to pack: in memory (tree), or written to
// dir when an overlay, remove or step changed it on disk.
type assembled struct {
	tree chartTree
	dir  string
}

// pack packs the assembled chart (see Pack).
func (a assembled) pack(name, version string, epoch time.Time) (*Archive, error) {
	if a.tree != nil {
		return packTree(a.tree, name, version, epoch)
	}
	return Pack(a.dir, name, version, epoch)
}

// assemble makes chart key of r from the fetched sources: a chart source
// is read, plain manifests are split, filtered, patched and wrapped; then
// values, overlay, remove and steps are applied and Chart.yaml gets its
// name and version. The chart stays in memory unless an overlay, remove or
// step needs it on disk: then it is written to the directory chartDir
// returns and changed there. keep writes a chart assembled in memory there
// too (--work-dir). Its steps: the base tree (baseTree), the values
// (mergeValues), then either in memory (finishInMemory) or on disk
// (finishOnDisk).
func assemble(ctx context.Context, recipeDir string, r *recipe.Recipe, key string, fetched map[string]*sources.Result, chartDir func() (string, error), keep bool, stepTimeout time.Duration) (assembled, error) {
	c := r.Spec.Charts[key]
	tree, err := baseTree(key, c, fetched)
	if err != nil {
		return assembled{}, err
	}
	if err := mergeValues(key, c, tree); err != nil {
		return assembled{}, err
	}
	if c.Overlay == "" && len(c.Remove) == 0 && len(c.Steps) == 0 {
		return finishInMemory(r, key, tree, chartDir, keep)
	}
	return finishOnDisk(ctx, recipeDir, r, key, tree, chartDir, stepTimeout)
}

// baseTree is chart key before values and changes on disk: its one chart
// source read, or its plain manifests split, excluded, patched and
// wrapped. A chart source mixed with others is refused, as are exclude,
// patches and crdsDir on a chart source.
func baseTree(key string, c recipe.Chart, fetched map[string]*sources.Result) (chartTree, error) {
	var charts, manifests []string
	for _, from := range c.From {
		res := fetched[from]
		if res == nil || res.Path == "" {
			return nil, fmt.Errorf("chart %s: source %s has no files", key, from)
		}
		if isChartDir(res.Path) {
			charts = append(charts, from)
		} else {
			manifests = append(manifests, from)
		}
	}
	switch {
	case len(charts) > 1 || (len(charts) == 1 && len(manifests) > 0):
		return nil, fmt.Errorf("chart %s: from mixes chart source %s with %s; a chart is made of one chart source or of plain manifests only", key, strings.Join(charts, ", "), strings.Join(append(charts[1:], manifests...), ", "))
	case len(charts) == 1:
		if len(c.Exclude) > 0 || len(c.Patches) > 0 || c.CRDsDir {
			return nil, fmt.Errorf("chart %s: exclude, patches and crdsDir apply to wrapped manifests, and source %s is a Helm chart; change it with values or overlay", key, charts[0])
		}
		tree, err := readTree(fetched[charts[0]].Path)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", key, err)
		}
		return tree, nil
	default:
		return wrapManifests(key, c, manifests, fetched)
	}
}

// wrapManifests splits the manifest sources' files into objects, excludes
// and patches them as chart key says, and wraps them into a chart.
func wrapManifests(key string, c recipe.Chart, manifests []string, fetched map[string]*sources.Result) (chartTree, error) {
	var objs []*patches.Object
	for _, from := range manifests {
		files, err := manifestFiles(fetched[from].Path)
		if err != nil {
			return nil, fmt.Errorf("chart %s: source %s: %w", key, from, err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f.path)
			if err != nil {
				return nil, err
			}
			o, err := patches.Split(from+"/"+f.rel, data)
			if err != nil {
				return nil, fmt.Errorf("chart %s: %w", key, err)
			}
			objs = append(objs, o...)
		}
	}
	var err error
	if objs, err = patches.Exclude(objs, c.Exclude); err != nil {
		return nil, fmt.Errorf("chart %s: %w", key, err)
	}
	if err := patches.Apply(objs, c.Patches); err != nil {
		return nil, fmt.Errorf("chart %s: %w", key, err)
	}
	files, err := patches.WrapFiles(key, objs, patches.WrapOptions{CRDsDir: c.CRDsDir})
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", key, err)
	}
	return filesTree(files), nil
}

// mergeValues merges chart key's values into the tree's values.yaml
// (made when there is none).
func mergeValues(key string, c recipe.Chart, tree chartTree) error {
	if len(c.Values) == 0 {
		return nil
	}
	vf := tree["values.yaml"]
	if vf != nil && vf.dir {
		return fmt.Errorf("chart %s: values.yaml is a directory", key)
	}
	var old []byte
	if vf != nil {
		old = vf.data
	}
	merged, err := patches.MergeValues(old, c.Values)
	if err != nil {
		return fmt.Errorf("chart %s: values: %w", key, err)
	}
	if vf == nil {
		vf = &treeFile{mode: 0o644}
		tree["values.yaml"] = vf
	}
	vf.data = merged
	return nil
}

// finishInMemory sets Chart.yaml's name and version in the tree and, with
// keep, writes the tree to the work directory.
func finishInMemory(r *recipe.Recipe, key string, tree chartTree, chartDir func() (string, error), keep bool) (assembled, error) {
	cf := tree["Chart.yaml"]
	if cf == nil || cf.dir {
		return assembled{}, fmt.Errorf("chart %s: Chart.yaml: missing", key)
	}
	data, err := setChartMetaData(cf.data, key, ChartVersion(r))
	if err != nil {
		return assembled{}, err
	}
	cf.data = data
	if keep {
		dst, err := chartDir()
		if err == nil {
			err = tree.write(dst)
		}
		if err != nil {
			return assembled{}, fmt.Errorf("chart %s: work dir: %w", key, err)
		}
	}
	return assembled{tree: tree}, nil
}

// finishOnDisk writes the tree to the directory chartDir returns, applies
// the overlay, the removals and the steps there, in that order, and sets
// Chart.yaml's name and version.
func finishOnDisk(ctx context.Context, recipeDir string, r *recipe.Recipe, key string, tree chartTree, chartDir func() (string, error), stepTimeout time.Duration) (assembled, error) {
	c := r.Spec.Charts[key]
	dst, err := chartDir()
	if err == nil {
		err = tree.write(dst)
	}
	if err != nil {
		return assembled{}, fmt.Errorf("chart %s: %w", key, err)
	}
	if c.Overlay != "" {
		dir, err := insideDir(recipeDir, c.Overlay)
		if err != nil {
			return assembled{}, fmt.Errorf("chart %s: overlay: %w", key, err)
		}
		if err := patches.Overlay(dst, dir); err != nil {
			return assembled{}, fmt.Errorf("chart %s: overlay %s: %w", key, c.Overlay, err)
		}
	}
	if len(c.Remove) > 0 {
		if err := patches.Remove(dst, c.Remove); err != nil {
			return assembled{}, fmt.Errorf("chart %s: remove: %w", key, err)
		}
	}
	for i, s := range c.Steps {
		if err := runStep(ctx, recipeDir, dst, s, stepTimeout); err != nil {
			return assembled{}, fmt.Errorf("chart %s: steps[%d] %s: %w", key, i, s.Plugin, err)
		}
	}
	if err := setChartMeta(dst, key, ChartVersion(r)); err != nil {
		return assembled{}, err
	}
	return assembled{dir: dst}, nil
}

// ChartVersion is the version every chart of a build gets:
// <spec.version>-<spec.build>, leading v stripped.
func ChartVersion(r *recipe.Recipe) string {
	return fmt.Sprintf("%s-%d", strings.TrimPrefix(r.Spec.Version, "v"), r.Spec.Build)
}

// OCITag is a chart version as an OCI tag ('+' is not allowed in tags).
func OCITag(version string) string { return strings.ReplaceAll(version, "+", "_") }

func isChartDir(p string) bool {
	fi, err := os.Stat(filepath.Join(p, "Chart.yaml"))
	return err == nil && fi.Mode().IsRegular()
}

type manifestFile struct{ path, rel string }

// manifestFiles lists a manifest source: the file itself, or every YAML and
// JSON file below a directory in sorted order.
func manifestFiles(p string) ([]manifestFile, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []manifestFile{{p, filepath.Base(p)}}, nil
	}
	var out []manifestFile
	err = filepath.WalkDir(p, func(f string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !manifestExtensions[strings.ToLower(filepath.Ext(f))] {
			return err
		}
		rel, _ := filepath.Rel(p, f)
		out = append(out, manifestFile{f, filepath.ToSlash(rel)})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("no .yaml, .yml or .json files in %s", p)
	}
	return out, err
}

// insideDir resolves rel under dir, refusing paths (and symlinks) that leave it.
func insideDir(dir, rel string) (string, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	p, err := filepath.EvalSymlinks(filepath.Join(dir, rel))
	if err != nil {
		return "", err
	}
	if r, err := filepath.Rel(root, p); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s leaves the recipe directory %s", rel, dir)
	}
	return p, nil
}

// setChartMeta sets Chart.yaml's name and version in the chart in dir,
// keeping its other fields, comments and order (see setChartMetaData).
func setChartMeta(dir, chartName, version string) error {
	p := filepath.Join(dir, "Chart.yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("chart %s: Chart.yaml: %w", chartName, err)
	}
	if data, err = setChartMetaData(data, chartName, version); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o600)
}

// setChartMetaData sets the name and version of the Chart.yaml data,
// keeping its other fields, comments and order.
func setChartMetaData(data []byte, chartName, version string) ([]byte, error) {
	node, err := kyaml.Parse(string(data))
	if err != nil {
		return nil, fmt.Errorf("chart %s: Chart.yaml: %w", chartName, err)
	}
	if err := node.PipeE(kyaml.SetField("name", kyaml.NewStringRNode(chartName))); err != nil {
		return nil, err
	}
	if err := node.PipeE(kyaml.SetField("version", kyaml.NewStringRNode(version))); err != nil {
		return nil, err
	}
	out, err := node.String()
	if err != nil {
		return nil, err
	}
	return []byte(out), nil
}

// runStep runs a step plugin (kubepkg-step-NAME or kbuild-step-NAME on
// PATH) on the finished chart, with `with` as JSON on stdin and
// KUBEPKG_CHART naming the chart directory, for at most timeout (the
// fetcher's plugin timeout, --plugin-timeout: one bound for every plugin).
func runStep(ctx context.Context, recipeDir, chartDir string, s recipe.Step, timeout time.Duration) error {
	var bin string
	for _, n := range []string{"kubepkg-step-" + s.Plugin, "kbuild-step-" + s.Plugin} {
		if p, err := exec.LookPath(n); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		return fmt.Errorf("no program kubepkg-step-%s or kbuild-step-%s on PATH; install the step plugin", s.Plugin, s.Plugin)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	in := []byte(s.With)
	if len(in) == 0 {
		in = []byte("{}")
	}
	abs, err := filepath.Abs(chartDir)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bin)
	cmd.Dir = recipeDir
	cmd.Stdin = bytes.NewReader(in)
	cmd.Env = append(os.Environ(), "KUBEPKG_CHART="+abs, "KUBEPKG_RECIPE_DIR="+recipeDir)
	// The plugin runs in its own process group; on timeout the whole group
	// is killed, and kbuild stops waiting for its pipes shortly after, even
	// when a child it left behind still holds stderr.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &stderr, n: 64 << 10}
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = "…" + msg[len(msg)-2000:]
		}
		if ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("%s: %w: it did not finish within %s", bin, ErrPluginTimeout, timeout)
		}
		return fmt.Errorf("%s: %w: %s", bin, err, msg)
	}
	return nil
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
