package main

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
	"sort"
	"strings"
	"text/template"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/recipe"
)

func newInitCmd() *Command {
	var (
		f         buildFlags
		chart     string
		manifests []string
		ver, name string
		namespace string
	)
	return &Command{
		Name:    "init",
		Usage:   "kbuild init DIR (--chart REPO/NAME@VERSION | --manifest URL... --version V) [--name N]",
		Summary: "Write a draft recipe for an upstream chart or manifests, with every pin filled in.",
		Help: `init downloads the upstream chart or manifests, pins them (the sha256 of each
file, the archive digest of a chart), takes the description and home page
from Chart.yaml, renders the charts with Helm's engine to list the CRDs they
ship into package.crds and every image they run into package.images, each
resolved to its digest in its registry. Plain manifests that carry a
Namespace get exclude: [{kind: Namespace}] (the installer creates the
release namespace). The draft has build: 1, rollback: {safe: false} to be
reviewed, and a default variant with one component per chart in namespace
NAME. It validates as is; review every line before publishing it.

REPO is an https:// chart repository or an oci:// registry path; the pins are
taken on first use, so check them against what upstream publishes.

Examples:
  # a chart from a Helm repository
  kbuild init recipes/redis --chart https://charts.example.com/redis@7.2.4

  # a chart from an OCI registry
  kbuild init recipes/podinfo --chart oci://ghcr.io/stefanprodan/charts/podinfo@6.7.1

  # release manifests, wrapped into a chart
  kbuild init recipes/kubevirt --version 1.9.0 \
    --manifest https://github.com/kubevirt/kubevirt/releases/download/v1.9.0/kubevirt-operator.yaml`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&chart, "chart", "", "upstream chart as REPO/NAME@VERSION")
			fs.StringArrayVar(&manifests, "manifest", nil, "URL of an upstream manifest file (repeat for several)")
			fs.StringVar(&ver, "version", "", "upstream version, for --manifest (default: the chart's version)")
			fs.StringVar(&name, "name", "", "package name (default: the chart's name, or the first manifest's file name)")
			fs.StringVar(&namespace, "namespace", "", "install namespace of the components (default: the package name)")
			f.sourceFlags.addFlags(fs)
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) != 1 {
				return usagef("name the directory to write the recipe into")
			}
			if (chart == "") == (len(manifests) == 0) {
				return usagef("give either --chart or --manifest")
			}
			dir := args[0]
			file := filepath.Join(dir, builder.RecipeFile)
			if _, err := os.Stat(file); err == nil {
				return fmt.Errorf("%s already exists; init writes new recipes only", file)
			}
			d, err := draftSources(chart, manifests, ver, name)
			if err != nil {
				return usagef("%v", err)
			}
			f.jobs = 1
			b, err := f.builder(env, nil, "", builder.WithUnpinnedImages(true))
			if err != nil {
				return err
			}
			fetch, err := f.fetcher(env)
			if err != nil {
				return err
			}
			for i := range d.Sources {
				if d.Sources[i].Source, err = fetch.Pin(ctx, d.Sources[i].Source); err != nil {
					return fmt.Errorf("source %s: %w", d.Sources[i].Name, err)
				}
			}
			if d.Namespace = namespace; d.Namespace == "" {
				d.Namespace = d.Name
			}
			// Render the draft once to learn what the charts ship and run.
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := writeDraft(file, d); err != nil {
				return err
			}
			// Problems about what the draft does not declare yet are expected.
			p, err := b.Prepare(ctx, dir)
			if p == nil {
				os.Remove(file)
				return fmt.Errorf("rendering the draft: %w", err)
			}
			images := map[string]bool{}
			crds := map[string]bool{}
			for _, c := range p.Charts {
				for _, crd := range c.Rendered.CRDs {
					crds[crd] = true
				}
				for _, o := range c.Rendered.Objects {
					if o["kind"] == "Namespace" && len(manifests) > 0 {
						d.ExcludeNamespace = true
					}
				}
				for _, img := range c.Rendered.Images {
					images[img] = true
				}
				if md := c.Rendered.Chart.Metadata; chart != "" {
					d.Description, d.Home = md.Description, md.Home
					if d.Version == "" {
						d.Version = md.Version
					}
				}
			}
			d.CRDs = slices.Sorted(maps.Keys(crds))
			for _, img := range slices.Sorted(maps.Keys(images)) {
				pin, err := resolveImage(ctx, img, f.plainHTTP, f.timeout)
				if err != nil {
					os.Remove(file)
					return err
				}
				d.Images = append(d.Images, pin)
			}
			sort.Strings(d.Images)
			d.Images = dedupe(d.Images)
			if err := writeDraft(file, d); err != nil {
				return err
			}
			l, err := b.Load(dir)
			if err != nil {
				return err
			}
			if err := l.Err(); err != nil {
				return fmt.Errorf("the draft does not validate, which is a bug in kbuild init: %w", err)
			}
			fmt.Fprintf(env.Stdout, "wrote %s; review it, then run: kbuild validate %s\n", file, dir)
			return nil
		},
	}
}

// draft is what init writes.
type draft struct {
	Name, Version, Description, Home, Namespace string
	Sources                                     []draftSource
	Chart                                       string // chart key
	ExcludeNamespace                            bool
	CRDs, Images                                []string
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

func draftSources(chart string, manifests []string, version, name string) (*draft, error) {
	d := &draft{Name: name, Version: strings.TrimPrefix(version, "v")}
	if chart != "" {
		at := strings.LastIndex(chart, "@")
		slash := strings.LastIndex(chart, "/")
		if at < 0 || slash < 0 || slash > at {
			return nil, fmt.Errorf("--chart %q: expected REPO/NAME@VERSION, e.g. https://charts.example.com/redis@7.2.4", chart)
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
		return nil, errors.New("--manifest needs --version, the upstream release")
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
      - {{ . }}
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

func writeDraft(file string, d *draft) error {
	var b strings.Builder
	if err := draftTemplate.Execute(&b, d); err != nil {
		return err
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}
