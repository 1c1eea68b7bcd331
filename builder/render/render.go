package render

import (
	"bytes"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	yaml "go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/releaseutil"
	k8syaml "sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/recipe"
)

// Rendered is what a chart installs with its default values: the objects of
// its templates and crds/ folder, and the images and CRDs found in them.
type Rendered struct {
	Chart   *chart.Chart
	Objects []map[string]any
	// Images are the image references the objects run, in normal form
	// (recipe.NormalizeImage), sorted.
	Images []string
	// CRDs are the names of the CustomResourceDefinitions shipped, sorted.
	CRDs []string
	// KubeVersion is the Kubernetes version the chart was rendered against
	// (.Capabilities.KubeVersion) and APIVersions the API set
	// (.Capabilities.APIVersions), sorted.
	KubeVersion string
	APIVersions []string
}

// Option tunes Render.
type Option func(*renderConfig)

type renderConfig struct {
	kubeVersion string
}

// WithKubeVersion renders against Kubernetes version v ("1.31" or
// "v1.31.2") instead of the default (see KubeVersionFor).
func WithKubeVersion(v string) Option {
	return func(c *renderConfig) { c.kubeVersion = v }
}

// Render loads a packed chart and renders it with Helm v3's engine, default
// values and the given release namespace, against the Kubernetes version
// KubeVersionFor picks and the API set APIVersions, in a rendering worker
// process bounded per chart in time, memory and output (see
// renderIsolated); the workers, at most one per CPU, are kept for the next
// chart and replaced when a chart breaks a budget.
//
// The render is deterministic: calls of Sprig's random functions in the
// templates give values derived from the chart, the call and how many times
// it ran (see deterministicTemplates), so the same chart and values render
// the same bytes every time, and objects a loop names at random still get
// names of their own. The output
// is read the way Helm reads it, each document alone, so a stream Helm
// would refuse (an alias to another document's anchor, say) is refused here.
func Render(data []byte, namespace string, opts ...Option) (*Rendered, error) {
	var cfg renderConfig
	for _, o := range opts {
		o(&cfg)
	}
	ch, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("load chart: %w", err)
	}
	kube, err := KubeVersionFor(ch.Metadata, cfg.kubeVersion)
	if err != nil {
		return nil, err
	}
	out, err := renderIsolated(data, ch.Name(), namespace, kube.Version)
	if err != nil {
		return nil, err
	}
	r := &Rendered{Chart: ch, KubeVersion: kube.Version, APIVersions: APIVersions(kube.Version)}
	for _, n := range slices.Sorted(maps.Keys(out)) {
		ext := path.Ext(n)
		if ext != ".yaml" && ext != ".yml" && ext != ".json" {
			continue
		}
		objs, err := decodeDocuments(out[n])
		if err != nil {
			return nil, fmt.Errorf("chart %s: rendered %s: %w", ch.Name(), n, err)
		}
		r.Objects = append(r.Objects, objs...)
	}
	for _, crd := range ch.CRDObjects() {
		objs, err := decodeDocuments(string(crd.File.Data))
		if err != nil {
			return nil, fmt.Errorf("chart %s: %s: %w", ch.Name(), crd.Filename, err)
		}
		r.Objects = append(r.Objects, objs...)
	}
	images, crds := map[string]bool{}, map[string]bool{}
	for _, o := range r.Objects {
		if o["kind"] == "CustomResourceDefinition" {
			if md, ok := o["metadata"].(map[string]any); ok {
				if n, ok := md["name"].(string); ok {
					crds[n] = true
				}
			}
			continue
		}
		collectImages(o, images)
	}
	r.Images, r.CRDs = slices.Sorted(maps.Keys(images)), slices.Sorted(maps.Keys(crds))
	return r, nil
}

// renderValues returns the values templates see: the chart's defaults,
// the release (named after the chart, in namespace or "default") and the
// capabilities of Kubernetes version kube (as KubeVersionFor resolves it)
// with the API set APIVersions.
func renderValues(ch *chart.Chart, namespace, kube string) (chartutil.Values, error) {
	if namespace == "" {
		namespace = "default"
	}
	kv, err := KubeVersionFor(ch.Metadata, kube)
	if err != nil {
		return nil, err
	}
	caps := &chartutil.Capabilities{KubeVersion: *kv, APIVersions: APIVersions(kv.Version), HelmVersion: chartutil.DefaultCapabilities.HelmVersion}
	opts := chartutil.ReleaseOptions{Name: ch.Name(), Namespace: namespace, Revision: 1, IsInstall: true}
	vals, err := chartutil.ToRenderValues(ch, ch.Values, opts, caps)
	if err != nil {
		return nil, fmt.Errorf("chart %s: values: %w", ch.Name(), err)
	}
	return vals, nil
}

// decodeDocuments reads a rendered stream the way Helm does: split as
// releaseutil.SplitManifests splits it (see splitManifests) and each
// document parsed on its own with sigs.k8s.io/yaml, as Helm's manifest
// sorter does before installing, then decoded into a map. Empty documents
// are dropped.
func decodeDocuments(s string) ([]map[string]any, error) {
	var objs []map[string]any
	for i, doc := range splitManifests(s) {
		data := []byte(doc)
		var head releaseutil.SimpleHead
		if err := k8syaml.Unmarshal(data, &head); err != nil {
			return nil, fmt.Errorf("document %d: Helm cannot read it: %w; each document must stand alone (an alias cannot refer to another document's anchor)", i+1, err)
		}
		var o map[string]any
		if err := yaml.Unmarshal(data, &o); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if len(o) > 0 {
			objs = append(objs, o)
		}
	}
	return objs, nil
}

// imageEnv matches environment variable names that operators use to pass
// the images they deploy (VIRT_OPERATOR_IMAGE, RELATED_IMAGE_API, …).
var imageEnv = regexp.MustCompile(`(?i)(^RELATED_IMAGE_|_IMAGE$|^IMAGE$)`)

// collectImages walks an object for the images it runs: every "image" field
// that holds a reference (containers, initContainers, ephemeralContainers
// and operator custom resources), "image: {registry, repository, tag,
// digest}" maps, and env entries named like *_IMAGE or RELATED_IMAGE_*.
func collectImages(v any, into map[string]bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if k == "image" {
				if ref := imageField(val); ref != "" {
					into[recipe.NormalizeImage(ref)] = true
					continue
				}
			}
			collectImages(val, into)
		}
		if n, ok := t["name"].(string); ok && imageEnv.MatchString(n) {
			if s, ok := t["value"].(string); ok && looksLikeImage(s) {
				into[recipe.NormalizeImage(s)] = true
			}
		}
	case []any:
		for _, e := range t {
			collectImages(e, into)
		}
	}
}

func imageField(v any) string {
	switch t := v.(type) {
	case string:
		if looksLikeImage(t) {
			return t
		}
	case map[string]any:
		repo, _ := t["repository"].(string)
		if repo == "" {
			return ""
		}
		if reg, _ := t["registry"].(string); reg != "" {
			repo = reg + "/" + repo
		}
		ref := repo
		if tag, _ := t["tag"].(string); tag != "" {
			ref += ":" + tag
		}
		if dig, _ := t["digest"].(string); dig != "" {
			ref += "@" + dig
		}
		if looksLikeImage(ref) {
			return ref
		}
	}
	return ""
}

func looksLikeImage(s string) bool {
	if s == "" || strings.ContainsAny(s, " \t\n{}") {
		return false
	}
	_, err := name.ParseReference(s, name.WeakValidation)
	return err == nil
}
