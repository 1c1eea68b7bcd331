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
	"strings"
	"text/template"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/recipe"
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
resolved to its digest in its registry (an image without a tag is
IMAGE:latest). Plain manifests that carry a Namespace get exclude:
[{kind: Namespace}] (the installer creates the release namespace). The draft has build: 1, rollback: {safe: false} to be
reviewed, and a default variant with one component per chart in namespace
NAME. init checks the draft with the full validation, rendering included,
before it ends; review every line before publishing it.

An image whose digest cannot be looked up (no access to its registry) does
not stop init: it is written with its tag and a "# TODO: pin" comment, which
validate reports, and init ends with a warning naming each such image and
the command that pins them later (kbuild images DIR --write); it exits 0.
--plain-http reaches loopback registries only (and --plain-http-host the
hosts named); the public registries of a chart's images are always HTTPS.

REPO is an https:// chart repository or an oci:// registry path; the pins are
taken on first use, so check them against what upstream publishes. With
--offline the pins come from the cache: a chart of an https:// repository
from the index.yaml and archive an earlier init cached, an oci:// chart and
a --manifest URL from the digest an earlier init (or kbuild fetch of a
recipe pinning them) recorded. Images are then written to pin later.

Examples:
  # a chart from a Helm repository
  kbuild init recipes/redis --chart https://charts.example.com/redis@7.2.4

  # a chart from an OCI registry
  kbuild init recipes/podinfo --chart oci://ghcr.io/stefanprodan/charts/podinfo@6.7.1

  # no access to the image registries here: draft now, pin the images later
  kbuild init recipes/redis --chart https://charts.example.com/redis@7.2.4
  kbuild images recipes/redis --write

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
			f.renderFlags.addFlags(fs)
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
			// Pin every source before writing anything, and name every
			// one that cannot be pinned, sorted.
			var pinErrs []error
			for i := range d.Sources {
				if d.Sources[i].Source, err = fetch.Pin(ctx, d.Sources[i].Source); err != nil {
					pinErrs = append(pinErrs, fmt.Errorf("source %s: %w", d.Sources[i].Name, err))
				}
			}
			slices.SortFunc(pinErrs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
			if err := errors.Join(pinErrs...); err != nil {
				return err
			}
			if d.Namespace = namespace; d.Namespace == "" {
				d.Namespace = d.Name
			}
			_, statErr := os.Stat(dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			// On failure leave nothing behind: no draft, and no directory
			// init made.
			fail := func(err error) error {
				os.Remove(file)
				if statErr != nil {
					os.Remove(dir)
				}
				return err
			}
			// Render the draft once to learn what the charts ship and run.
			if err := writeDraft(file, d); err != nil {
				return fail(err)
			}
			// Problems about what the draft does not declare yet are expected.
			p, err := b.Prepare(ctx, dir)
			if p == nil {
				return fail(fmt.Errorf("rendering the draft: %w", err))
			}
			for _, c := range p.Charts {
				for _, o := range c.Rendered.Objects {
					if o["kind"] == "Namespace" && len(manifests) > 0 {
						d.ExcludeNamespace = true
					}
				}
				if md := c.Rendered.Chart.Metadata; chart != "" {
					d.Description, d.Home = md.Description, md.Home
					if d.Version == "" {
						d.Version = md.Version
					}
				}
			}
			d.CRDs = shippedCRDs(p)
			var todo []string
			for _, e := range builder.PlanImages(ctx, p, fetch.ResolveImage) {
				d.Images = append(d.Images, draftImage{Ref: e.Ref, TODO: e.Err != nil})
				if e.Err != nil {
					todo = append(todo, e.Err.Error())
				}
			}
			if err := writeDraft(file, d); err != nil {
				return fail(err)
			}
			// The self-check is the full validation, rendering included;
			// only the images init could not pin may be reported.
			strict, err := f.builder(env, nil, "")
			if err != nil {
				return fail(err)
			}
			l, err := strict.Load(dir)
			if err != nil {
				return fail(err)
			}
			if l.Recipe == nil {
				return fail(fmt.Errorf("the draft does not validate, which is a bug in kbuild init: %w", l.Err()))
			}
			if _, err := strict.PrepareLoaded(ctx, l); err != nil {
				var pe *recipe.ProblemsError
				if !errors.As(err, &pe) || !onlyUnpinned(pe.Problems) || len(pe.Problems.Errors()) > len(todo) {
					return fail(fmt.Errorf("the draft does not validate, which is a bug in kbuild init: %w", err))
				}
			}
			fmt.Fprintf(env.Stdout, "wrote %s; review it, then run: kbuild validate %s\n", file, dir)
			if len(todo) > 0 {
				fmt.Fprintf(env.Stderr, "warning: %d images are not pinned (marked # TODO: pin), their digests could not be looked up:\n  %s\npin them where their registries can be reached: kbuild images %s --write\n",
					len(todo), strings.Join(todo, "\n  "), dir)
			}
			return nil
		},
	}
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

func writeDraft(file string, d *draft) error {
	var b strings.Builder
	if err := draftTemplate.Execute(&b, d); err != nil {
		return err
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}
