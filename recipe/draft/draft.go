package draft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/sources"
)

// Request names the upstream release to draft a recipe for: either Chart
// or Manifests.
type Request struct {
	// Chart is the upstream chart as REPO/NAME@VERSION, REPO an https://
	// chart repository or an oci:// registry path.
	Chart string
	// Manifests are the URLs of upstream manifest files, wrapped into one
	// chart; they need Version.
	Manifests []string
	// Version is the upstream version (default: the chart's version).
	Version string
	// Name is the package name (default: the chart's name, or the first
	// manifest's file name, as a DNS label).
	Name string
	// Namespace is the install namespace of the component (default: the
	// package name).
	Namespace string
}

// RequestError reports a Request that names no release or names it
// wrongly; the message says what is expected. Input names the Request
// field it is about ("chart", "manifest", "version"), or is "" for
// neither chart nor manifests; a message about a field's value starts
// with its name, so a command can name its flag instead.
type RequestError struct {
	Input string
	msg   string
}

func (e *RequestError) Error() string { return e.msg }

// InputName returns Input.
func (e *RequestError) InputName() string { return e.Input }

// Tools are what drafting uses: Fetcher pins the sources and resolves
// image digests; Lenient renders the draft while its images are not
// pinned yet (builder.WithUnpinnedImages); Strict, the builder of kbuild
// validate, checks the result. Neither builder pushes anything.
type Tools struct {
	Fetcher         *sources.Fetcher
	Lenient, Strict *builder.Builder
}

// Result is what Write wrote.
type Result struct {
	// File is the recipe.yaml written.
	File string
	// Unpinned says, for each image whose digest could not be looked up,
	// why; those are written with their tag and a "# TODO: pin" comment.
	Unpinned []string
}

// Write drafts a recipe for req into dir/recipe.yaml (dir is created when
// missing). It pins every source first and names, sorted, each that
// cannot be pinned; renders the draft to fill in package.crds,
// package.images (resolved to digests; those that cannot be are marked
// to pin later), the chart's description and home page and, for
// manifests carrying a Namespace, an exclude of it; and checks the result
// with the full validation, in which only the unpinned images may be
// reported. An existing recipe.yaml is never overwritten, and on failure
// nothing is left behind: no draft, and no directory Write made. Errors
// about req itself are *RequestError.
func Write(ctx context.Context, dir string, req Request, t Tools) (*Result, error) {
	file := filepath.Join(dir, builder.RecipeFile)
	if _, err := os.Stat(file); err == nil {
		return nil, fmt.Errorf("%s already exists; init writes new recipes only", file)
	}
	if (req.Chart == "") == (len(req.Manifests) == 0) {
		return nil, &RequestError{msg: "give either a chart or manifests"}
	}
	d, err := sourcesOf(req)
	if err != nil {
		return nil, err
	}
	// Pin every source before writing anything, and name every one that
	// cannot be pinned, sorted.
	var pinErrs []error
	for i := range d.Sources {
		if d.Sources[i].Source, err = t.Fetcher.Pin(ctx, d.Sources[i].Source); err != nil {
			pinErrs = append(pinErrs, fmt.Errorf("source %s: %w", d.Sources[i].Name, err))
		}
	}
	slices.SortFunc(pinErrs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	if err := errors.Join(pinErrs...); err != nil {
		return nil, err
	}
	if d.Namespace = req.Namespace; d.Namespace == "" {
		d.Namespace = d.Name
	}
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	res, err := d.write(ctx, dir, file, req, t)
	if err != nil {
		os.Remove(file)
		if statErr != nil {
			os.Remove(dir)
		}
		return nil, err
	}
	return res, nil
}

// write renders d once to learn what the charts ship and run, writes the
// completed draft and validates it.
func (d *draft) write(ctx context.Context, dir, file string, req Request, t Tools) (*Result, error) {
	if err := writeDraft(file, d); err != nil {
		return nil, err
	}
	// Problems about what the draft does not declare yet are expected.
	p, err := t.Lenient.Prepare(ctx, dir)
	if p == nil {
		return nil, fmt.Errorf("rendering the draft: %w", err)
	}
	for _, c := range p.Charts {
		for _, o := range c.Rendered.Objects {
			if o["kind"] == "Namespace" && len(req.Manifests) > 0 {
				d.ExcludeNamespace = true
			}
		}
		if md := c.Rendered.Chart.Metadata; req.Chart != "" {
			d.Description, d.Home = md.Description, md.Home
			if d.Version == "" {
				d.Version = md.Version
			}
		}
	}
	d.CRDs = shippedCRDs(p)
	res := &Result{File: file}
	for _, e := range builder.PlanImages(ctx, p, t.Fetcher.ResolveImage) {
		d.Images = append(d.Images, draftImage{Ref: e.Ref, TODO: e.Err != nil})
		if e.Err != nil {
			res.Unpinned = append(res.Unpinned, e.Err.Error())
		}
	}
	if err := writeDraft(file, d); err != nil {
		return nil, err
	}
	// The self-check is the full validation, rendering included; only the
	// images that could not be pinned may be reported.
	l, err := t.Strict.Load(dir)
	if err != nil {
		return nil, err
	}
	if l.Recipe == nil {
		return nil, fmt.Errorf("the draft does not validate, which is a bug in kbuild init: %w", l.Err())
	}
	if _, err := t.Strict.PrepareLoaded(ctx, l); err != nil {
		var pe *recipe.ProblemsError
		if !errors.As(err, &pe) || !pe.Problems.OnlyUnpinned() || len(pe.Problems.Errors()) > len(res.Unpinned) {
			return nil, fmt.Errorf("the draft does not validate, which is a bug in kbuild init: %w", err)
		}
	}
	return res, nil
}

// shippedCRDs returns the CRDs the prepared charts ship, sorted.
func shippedCRDs(p *builder.Prepared) []string {
	crds := map[string]bool{}
	for _, c := range p.Charts {
		for _, crd := range c.Rendered.CRDs {
			crds[crd] = true
		}
	}
	return slices.Sorted(maps.Keys(crds))
}

// draft is what init writes.
type draft struct {
	Name, Version, Description, Home, Namespace string
	Sources                                     []draftSource
	Chart                                       string // chart key
	ExcludeNamespace                            bool
	CRDs                                        []string
	Images                                      []draftImage
}

// draftImage is an entry of the draft's package.images: pinned, or marked
// for the maintainer to pin when its digest could not be looked up.
type draftImage struct {
	Ref  string
	TODO bool
}

type draftSource struct {
	Name   string
	Source recipe.Source
}

var nonLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// label makes a DNS-1123 label of s.
func label(s string) string {
	s = strings.Trim(nonLabel.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 63 {
		s = strings.Trim(s[:63], "-")
	}
	return s
}

// sourcesOf returns the draft of req's sources and names, before pinning.
func sourcesOf(req Request) (*draft, error) {
	chart, manifests, name := req.Chart, req.Manifests, req.Name
	d := &draft{Name: name, Version: strings.TrimPrefix(req.Version, "v")}
	if chart != "" {
		at := strings.LastIndex(chart, "@")
		slash := strings.LastIndex(chart, "/")
		if at < 0 || slash < 0 || slash > at {
			return nil, &RequestError{Input: "chart", msg: fmt.Sprintf("chart %q: expected REPO/NAME@VERSION, e.g. https://charts.example.com/redis@7.2.4", chart)}
		}
		repo, chartName, chartVersion := chart[:slash], chart[slash+1:at], chart[at+1:]
		d.Sources = []draftSource{{"upstream", recipe.Source{Chart: &recipe.ChartSource{Repository: repo, Name: chartName, Version: chartVersion}}}}
		if d.Name == "" {
			d.Name = label(chartName)
		}
		if d.Version == "" {
			d.Version = strings.TrimPrefix(chartVersion, "v")
		}
		d.Chart = label(chartName)
		return d, nil
	}
	if d.Version == "" {
		return nil, &RequestError{Input: "version", msg: "manifests need a version, the upstream release"}
	}
	seen := map[string]bool{}
	for _, u := range manifests {
		n := label(strings.TrimSuffix(strings.TrimSuffix(path.Base(u), path.Ext(u)), ".tar"))
		for base, i := n, 2; seen[n]; i++ {
			n = fmt.Sprintf("%s-%d", base, i)
		}
		seen[n] = true
		d.Sources = append(d.Sources, draftSource{n, recipe.Source{URL: u}})
	}
	if d.Name == "" {
		d.Name = d.Sources[0].Name
	}
	d.Chart = d.Name
	return d, nil
}

func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var draftTemplate = template.Must(template.New("recipe").Funcs(template.FuncMap{"q": q}).Parse(`# Draft written by kbuild init: review every line, then run kbuild validate.
apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: {{ .Name }}
  annotations:
    kubepkg.dev/description: {{ q .Description }}
{{- if .Home }}
    kubepkg.dev/home: {{ q .Home }}
{{- end }}
spec:
  version: {{ q .Version }}
  build: 1
  sources:
{{- range .Sources }}
    {{ .Name }}:
{{- if .Source.Chart }}
      chart:
        repository: {{ q .Source.Chart.Repository }}
        name: {{ q .Source.Chart.Name }}
        version: {{ q .Source.Chart.Version }}
        digest: {{ q .Source.Chart.Digest }}
{{- else }}
      url: {{ q .Source.URL }}
      sha256: {{ q .Source.SHA256 }}
{{- end }}
{{- end }}
  charts:
    {{ .Chart }}:
      from: [{{ range $i, $s := .Sources }}{{ if $i }}, {{ end }}{{ $s.Name }}{{ end }}]
{{- if .ExcludeNamespace }}
      # the installer creates the release namespace
      exclude:
        - kind: Namespace
{{- end }}
  package:
    provides: [{{ .Name }}]
{{- if .CRDs }}
    crds:
{{- range .CRDs }}
      - {{ . }}
{{- end }}
{{- end }}
    # Can clusters go back to an older version of this package? Say true
    # only when upstream supports downgrades.
    rollback: {safe: false}
{{- if .Images }}
    images:
{{- range .Images }}
      - {{ .Ref }}{{ if .TODO }}  # TODO: pin (kbuild images DIR --write){{ end }}
{{- end }}
{{- end }}
    variants:
      - name: default
        components:
          - name: {{ .Chart }}
            path: {{ .Chart }}
            install:
              namespace: {{ .Namespace }}
`))

// writeDraft writes d to file through a temporary file in its directory,
// so that file is never half-written.
func writeDraft(file string, d *draft) error {
	var b strings.Builder
	if err := draftTemplate.Execute(&b, d); err != nil {
		return err
	}
	return atomicfile.WriteFile(file, []byte(b.String()), 0o644)
}
