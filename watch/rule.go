package watch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	yaml "go.yaml.in/yaml/v3"

	"kbuild.dev/kbuild/internal/yamlbound"
)

// The apiVersion and kind of a watch rule, and its file name beside
// recipe.yaml.
const (
	APIVersion = "kbuild.dev/v1alpha1"
	Kind       = "Watch"
	FileName   = "watch.yaml"
)

// MaxRuleSize bounds a watch.yaml; real ones are a few hundred bytes.
const MaxRuleSize = 256 << 10

// DefaultPlatform is the platform an image must have a digest for unless
// the rule names another.
const DefaultPlatform = "linux/amd64"

// ErrNoRule is wrapped by Load's error for a recipe without watch.yaml.
var ErrNoRule = errors.New("no watch rule")

// Rule is a recipe's watch.yaml: where its upstream versions come from
// and how its sources and images follow the version.
type Rule struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	// Upstream decides the package version.
	Upstream Upstream `yaml:"upstream"`
	// Also names further upstreams that images may follow (an operator's
	// helper images released on their own line), by name.
	Also map[string]Upstream `yaml:"also,omitempty"`
	// Sources says how each url, chart and git source of the recipe
	// follows the version, by source name.
	Sources map[string]SourceRule `yaml:"sources,omitempty"`
	// Keep lists url, chart and git sources that stay as they are.
	Keep []string `yaml:"keep,omitempty"`
	// Images says how the recipe's image references follow; an image no
	// rule matches keeps its reference.
	Images []ImageRule `yaml:"images,omitempty"`
	// Requires says how the version constraints of the recipe's
	// requirements on other packages follow (a meta package moving to a
	// new minor line of its members).
	Requires []RequireRule `yaml:"requires,omitempty"`
	// Platform is the OS/ARCH every re-pinned image must have a manifest
	// for (default linux/amd64).
	Platform string `yaml:"platform,omitempty"`
}

// RequireRule gives the requirements on a package (in every variant) a
// new version constraint.
type RequireRule struct {
	// Package is the package required.
	Package string `yaml:"package"`
	// Version is the new constraint, a template, e.g. "~{major}.{minor}".
	Version string `yaml:"version"`
	// From names the upstream in also: the constraint follows (default
	// the package's).
	From string `yaml:"from,omitempty"`
}

// Upstream is one place upstream versions are listed. Exactly one of
// Helm, OCI, Git, GitHub and Listing is set.
type Upstream struct {
	Helm     *HelmUpstream    `yaml:"helm,omitempty"`
	OCI      *OCIUpstream     `yaml:"oci,omitempty"`
	Git      *GitUpstream     `yaml:"git,omitempty"`
	GitHub   *GitHubUpstream  `yaml:"github,omitempty"`
	Listing  *ListingUpstream `yaml:"listing,omitempty"`
	Versions VersionPolicy    `yaml:"versions,omitempty"`
}

// HelmUpstream is a chart's versions in a Helm repository's index.yaml.
type HelmUpstream struct {
	Repository string `yaml:"repository"`
	Chart      string `yaml:"chart"`
}

// OCIUpstream is the tags of an OCI repository: a chart
// (oci://HOST/PATH/NAME) or an image (HOST/PATH).
type OCIUpstream struct {
	Repository string `yaml:"repository"`
}

// GitUpstream is the tags of a git repository.
type GitUpstream struct {
	URL string `yaml:"url"`
}

// GitHubUpstream is the releases of a repository in a GitHub-style API.
type GitHubUpstream struct {
	// Repository is OWNER/NAME.
	Repository string `yaml:"repository"`
	// API is the API's base URL (default https://api.github.com).
	API string `yaml:"api,omitempty"`
	// Assets lists asset names (templates) a release must carry to count.
	Assets []string `yaml:"assets,omitempty"`
}

// ListingUpstream is the entries of an HTTP directory listing (the
// href of every link in the page).
type ListingUpstream struct {
	URL string `yaml:"url"`
}

// VersionPolicy says which names upstream lists are versions, and which
// versions are allowed.
type VersionPolicy struct {
	// Pattern is a regular expression (RE2) a name must match; its first
	// group, or else the whole match, is the version. Default: the name.
	Pattern string `yaml:"pattern,omitempty"`
	// Strip lists prefixes removed from the version (the first that
	// matches), e.g. "v" or "release-".
	Strip []string `yaml:"strip,omitempty"`
	// Constraint is a semver constraint the version must meet ("~1.9"
	// stays on 1.9.x, ">=1.9" follows majors). Default: any.
	Constraint string `yaml:"constraint,omitempty"`
	// Prerelease is "exclude" (the default) or "include".
	Prerelease string `yaml:"prerelease,omitempty"`
}

// SourceRule says how one source follows the version. Exactly one of
// URL, Asset, GitTag and Chart is set.
type SourceRule struct {
	// URL is the url source's new URL, a template.
	URL string `yaml:"url,omitempty"`
	// Asset is the name (a template) of a GitHub release asset: the url
	// source takes its download URL, and its digest when the API lists one.
	Asset string `yaml:"asset,omitempty"`
	// GitTag is the tag (a template) whose commit the git source pins.
	GitTag string `yaml:"gitTag,omitempty"`
	// Chart makes a chart source's version the new version.
	Chart bool `yaml:"chart,omitempty"`
	// From names the upstream in also: the source follows (default the
	// package's).
	From string `yaml:"from,omitempty"`
}

// ImageRule gives the images whose repository matches a new tag.
type ImageRule struct {
	// Repository is a path.Match pattern over registry/repository, e.g.
	// quay.io/kubevirt/virt-*.
	Repository string `yaml:"repository"`
	// Tag is the new tag, a template; {appVersion} is the appVersion of
	// the recipe's chart source after the bump.
	Tag string `yaml:"tag"`
	// From names the upstream in also: the tag follows (default the
	// package's).
	From string `yaml:"from,omitempty"`
}

// placeholders are the names a template may use.
var placeholders = []string{"version", "tag", "major", "minor", "patch", "appVersion"}

var placeholderRe = regexp.MustCompile(`\{([^{}]*)\}`)

// Load reads dir/watch.yaml; a recipe without one is an error wrapping
// ErrNoRule.
func Load(dir string) (*Rule, error) {
	file := filepath.Join(dir, FileName)
	fi, err := os.Lstat(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w; write one beside recipe.yaml (docs/watch.md)", file, ErrNoRule)
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", file)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxRuleSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(data) > MaxRuleSize {
		return nil, fmt.Errorf("%s: more than the limit for a watch rule of %d bytes", file, MaxRuleSize)
	}
	return Parse(file, data)
}

// Parse decodes a watch rule strictly: unknown fields, duplicate keys,
// values of the wrong type and rules that cannot work are errors naming
// file, line and field. Aliases are bounded by yamlbound.
func Parse(file string, data []byte) (*Rule, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := yamlbound.Check(&doc, len(data)); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty file; a watch rule starts with apiVersion: %s and kind: %s", file, APIVersion, Kind)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var r Rule
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	v := validator{file: file, root: doc.Content[0]}
	v.rule(&r)
	if len(v.errs) > 0 {
		return nil, errors.Join(v.errs...)
	}
	if r.Platform == "" {
		r.Platform = DefaultPlatform
	}
	return &r, nil
}

// validator collects the problems of a decoded rule with their lines.
type validator struct {
	file string
	root *yaml.Node
	errs []error
}

// bad records a problem with field (dot-separated) and its line.
func (v *validator) bad(field, format string, args ...any) {
	line := lineOf(v.root, strings.Split(field, "."))
	v.errs = append(v.errs, fmt.Errorf("%s: line %d: %s: %s", v.file, line, field, fmt.Sprintf(format, args...)))
}

func (v *validator) rule(r *Rule) {
	if r.APIVersion != APIVersion {
		v.bad("apiVersion", "expected %s, got %q", APIVersion, r.APIVersion)
	}
	if r.Kind != Kind {
		v.bad("kind", "expected %s, got %q", Kind, r.Kind)
	}
	v.upstream("upstream", &r.Upstream)
	for _, n := range sortedKeys(r.Also) {
		u := r.Also[n]
		v.upstream("also."+n, &u)
	}
	from := func(field, name string) {
		if _, ok := r.Also[name]; name != "" && !ok {
			v.bad(field, "no upstream %q under also:", name)
		}
	}
	for i, q := range r.Requires {
		f := fmt.Sprintf("requires.%d", i)
		if q.Package == "" || q.Version == "" {
			v.bad(f, "set package and version (a template such as ~{major}.{minor})")
		}
		v.template(f+".version", q.Version, false)
		from(f+".from", q.From)
	}
	for _, n := range sortedKeys(r.Sources) {
		s := r.Sources[n]
		f := "sources." + n
		set := 0
		for _, b := range []bool{s.URL != "", s.Asset != "", s.GitTag != "", s.Chart} {
			if b {
				set++
			}
		}
		if set != 1 {
			v.bad(f, "set exactly one of url, asset, gitTag and chart (got %d)", set)
		}
		if s.Asset != "" && r.upstreamOf(s.From).GitHub == nil {
			v.bad(f+".asset", "an asset needs a github upstream")
		}
		if s.Chart && r.upstreamOf(s.From).Helm == nil && r.upstreamOf(s.From).OCI == nil {
			v.bad(f+".chart", "a chart follows a helm or oci upstream")
		}
		for _, t := range []struct{ field, text string }{{"url", s.URL}, {"asset", s.Asset}, {"gitTag", s.GitTag}} {
			v.template(f+"."+t.field, t.text, false)
		}
		from(f+".from", s.From)
		if slices.Contains(r.Keep, n) {
			v.bad(f, "is also listed in keep:")
		}
	}
	platform := r.Platform
	if platform == "" {
		platform = DefaultPlatform
	}
	if os, arch, ok := strings.Cut(platform, "/"); !ok || os == "" || arch == "" {
		v.bad("platform", "expected OS/ARCH such as linux/amd64, got %q", platform)
	}
	for i, im := range r.Images {
		f := fmt.Sprintf("images.%d", i)
		if im.Repository == "" {
			v.bad(f+".repository", "missing: a pattern such as quay.io/kubevirt/virt-*")
		} else if _, err := path.Match(im.Repository, ""); err != nil {
			v.bad(f+".repository", "%v", err)
		}
		if im.Tag == "" {
			v.bad(f+".tag", "missing: a template such as v{version}")
		}
		v.template(f+".tag", im.Tag, true)
		from(f+".from", im.From)
	}
}

// upstreamOf returns the upstream name follows: the package's for "".
func (r *Rule) upstreamOf(name string) Upstream {
	if name == "" {
		return r.Upstream
	}
	return r.Also[name]
}

func (v *validator) upstream(f string, u *Upstream) {
	set := 0
	for _, b := range []bool{u.Helm != nil, u.OCI != nil, u.Git != nil, u.GitHub != nil, u.Listing != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		v.bad(f, "set exactly one of helm, oci, git, github and listing (got %d)", set)
	}
	need := func(field, value, example string) {
		if value == "" {
			v.bad(f+"."+field, "missing: %s", example)
		}
	}
	switch {
	case u.Helm != nil:
		need("helm.repository", u.Helm.Repository, "the repository URL, e.g. https://charts.example.com")
		need("helm.chart", u.Helm.Chart, "the chart name")
		v.httpURL(f+".helm.repository", u.Helm.Repository)
	case u.OCI != nil:
		need("oci.repository", u.OCI.Repository, "oci://HOST/PATH/CHART or HOST/PATH/IMAGE")
	case u.Git != nil:
		need("git.url", u.Git.URL, "the repository URL")
	case u.GitHub != nil:
		if o, n, ok := strings.Cut(u.GitHub.Repository, "/"); !ok || o == "" || n == "" || strings.Contains(n, "/") {
			v.bad(f+".github.repository", "expected OWNER/NAME, got %q", u.GitHub.Repository)
		}
		if u.GitHub.API != "" {
			v.httpURL(f+".github.api", u.GitHub.API)
		}
		for i, a := range u.GitHub.Assets {
			v.template(fmt.Sprintf("%s.github.assets.%d", f, i), a, false)
		}
	case u.Listing != nil:
		need("listing.url", u.Listing.URL, "the listing's URL")
		v.httpURL(f+".listing.url", u.Listing.URL)
	}
	p := u.Versions
	if p.Pattern != "" {
		if re, err := regexp.Compile(p.Pattern); err != nil {
			v.bad(f+".versions.pattern", "%v", err)
		} else if re.NumSubexp() > 1 && re.SubexpIndex("version") < 0 {
			v.bad(f+".versions.pattern", "has %d groups; keep one (the version) or name it (?P<version>…)", re.NumSubexp())
		}
	}
	if p.Constraint != "" {
		if _, err := semver.NewConstraint(p.Constraint); err != nil {
			v.bad(f+".versions.constraint", "%v", err)
		}
	}
	switch p.Prerelease {
	case "", "exclude", "include":
	default:
		v.bad(f+".versions.prerelease", "expected exclude or include, got %q", p.Prerelease)
	}
}

func (v *validator) httpURL(f, u string) {
	if u != "" && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		v.bad(f, "expected an http(s) URL, got %q", u)
	}
}

// template checks the placeholders of a template; appVersion only where
// allowed.
func (v *validator) template(f, text string, appVersion bool) {
	for _, m := range placeholderRe.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(placeholders, m[1]) || (m[1] == "appVersion" && !appVersion) {
			v.bad(f, "unknown placeholder {%s}; use {version}, {tag}, {major}, {minor} or {patch}%s", m[1], map[bool]string{true: " or {appVersion}"}[appVersion])
		}
	}
}

// lineOf returns the line of the node at keys under n (the nearest
// written parent's when the field is absent; list items by index).
func lineOf(n *yaml.Node, keys []string) int {
	line := n.Line
	for _, k := range keys {
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					next = n.Content[i+1]
					line = n.Content[i].Line
				}
			}
		case yaml.SequenceNode:
			var i int
			if _, err := fmt.Sscan(k, &i); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
