package builder

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	yaml "go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

// Rendered is what a chart installs with its default values: the objects of
// its templates and crds/ folder, and the images and CRDs found in them.
type Rendered struct {
	Chart   *chart.Chart
	Objects []map[string]any
	// Images are the image references the objects run, as written, sorted.
	Images []string
	// CRDs are the names of the CustomResourceDefinitions shipped, sorted.
	CRDs []string
}

// Render loads a packed chart and renders it with Helm v3's engine, default
// values and the given release namespace, in a child process bounded in
// time, memory and output (see renderIsolated).
func Render(data []byte, namespace string) (*Rendered, error) {
	ch, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("load chart: %w", err)
	}
	out, err := renderIsolated(data, ch.Name(), namespace)
	if err != nil {
		return nil, err
	}
	r := &Rendered{Chart: ch}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ext := path.Ext(n)
		if ext != ".yaml" && ext != ".yml" && ext != ".json" {
			continue
		}
		objs, err := decodeDocuments(out[n])
		if err != nil {
			return nil, fmt.Errorf("chart %s: rendered %s is not valid YAML: %w", ch.Name(), n, err)
		}
		r.Objects = append(r.Objects, objs...)
	}
	for _, crd := range ch.CRDObjects() {
		objs, err := decodeDocuments(string(crd.File.Data))
		if err != nil {
			return nil, fmt.Errorf("chart %s: %s is not valid YAML: %w", ch.Name(), crd.Filename, err)
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
	r.Images, r.CRDs = sortedSet(images), sortedSet(crds)
	return r, nil
}

// renderValues returns the values templates see: the chart's defaults,
// the release (named after the chart, in namespace or "default") and
// Helm's default capabilities.
func renderValues(ch *chart.Chart, namespace string) (chartutil.Values, error) {
	if namespace == "" {
		namespace = "default"
	}
	opts := chartutil.ReleaseOptions{Name: ch.Name(), Namespace: namespace, Revision: 1, IsInstall: true}
	vals, err := chartutil.ToRenderValues(ch, ch.Values, opts, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, fmt.Errorf("chart %s: values: %w", ch.Name(), err)
	}
	return vals, nil
}

func decodeDocuments(s string) ([]map[string]any, error) {
	dec := yaml.NewDecoder(strings.NewReader(s))
	var objs []map[string]any
	for {
		var o map[string]any
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(o) > 0 {
			objs = append(objs, o)
		}
	}
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
					into[ref] = true
					continue
				}
			}
			collectImages(val, into)
		}
		if n, ok := t["name"].(string); ok && imageEnv.MatchString(n) {
			if s, ok := t["value"].(string); ok && looksLikeImage(s) {
				into[s] = true
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

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// imageKey is the comparable form of an image reference.
type imageKey struct {
	repo, tag, digest string
}

func parseImage(ref string) (imageKey, error) {
	r, err := name.ParseReference(ref, name.WeakValidation)
	if err != nil {
		return imageKey{}, err
	}
	k := imageKey{repo: r.Context().Name()}
	base, dig, _ := strings.Cut(ref, "@")
	k.digest = dig
	if last := base[strings.LastIndex(base, "/")+1:]; strings.Contains(last, ":") {
		k.tag = last[strings.Index(last, ":")+1:]
	} else if dig == "" {
		k.tag = "latest"
	}
	return k, nil
}

// PinFor returns the entry of pinned that pins image: the same repository
// and either the same digest or the same tag. ok is false when none does.
func PinFor(image string, pinned []string) (pin string, ok bool) {
	want, err := parseImage(image)
	if err != nil {
		return "", false
	}
	for _, p := range pinned {
		have, err := parseImage(p)
		if err != nil || have.repo != want.repo || have.digest == "" {
			continue
		}
		if (want.digest != "" && want.digest == have.digest) || (want.digest == "" && want.tag == have.tag) {
			return p, true
		}
	}
	return "", false
}
