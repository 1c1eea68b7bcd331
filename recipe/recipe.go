package recipe

import (
	"encoding/json"

	"kbuild.dev/kbuild/spec"
)

// Supported apiVersions; all share one schema. Written records use APIVersion.
const (
	APIVersion = "kubepkg.dev/v1"
	Kind       = "Recipe"
)

// Well-known annotations copied into the index.
const (
	AnnotationDescription = "kubepkg.dev/description"
	AnnotationHome        = "kubepkg.dev/home"
)

// Recipe is one package's recipe.yaml.
type Recipe struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`
}

// Metadata names the package.
type Metadata struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Spec is what to build: an upstream version, our build number, the sources,
// the charts made from them and the package metadata.
type Spec struct {
	Version string            `json:"version"`
	Build   int               `json:"build"`
	Sources map[string]Source `json:"sources,omitempty"`
	Charts  map[string]Chart  `json:"charts,omitempty"`
	Package Package           `json:"package"`
	// Verify holds kubepkg's upstream signature checks. kbuild pins every
	// source by digest instead and warns that these are not evaluated.
	Verify json.RawMessage `json:"verify,omitempty"`
}

// Source is one upstream input. Exactly one of URL, Chart, Dir, Plugin, Git
// or Image is set.
type Source struct {
	URL    string `json:"url,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// Path picks a file or folder inside an archive (url) or a tree (git).
	Path string `json:"path,omitempty"`
	// Strip removes this many leading directories from archive entries.
	Strip  int             `json:"strip,omitempty"`
	Chart  *ChartSource    `json:"chart,omitempty"`
	Dir    string          `json:"dir,omitempty"`
	Plugin string          `json:"plugin,omitempty"`
	With   json.RawMessage `json:"with,omitempty"`
	Git    *GitSource      `json:"git,omitempty"`
	Image  *ImageSource    `json:"image,omitempty"`
}

// ChartSource is a Helm chart in an HTTP(S) or OCI repository, pinned by the
// sha256 of its archive.
type ChartSource struct {
	Repository string `json:"repository"`
	Name       string `json:"name"`
	Version    string `json:"version"`
	Digest     string `json:"digest"`
}

// GitSource is a tree at a commit of a git repository.
type GitSource struct {
	URL    string `json:"url"`
	Commit string `json:"commit"`
	Path   string `json:"path,omitempty"`
}

// ImageSource is a container image pinned by digest.
type ImageSource struct {
	Ref string `json:"ref"`
}

// Chart says how one chart of the package is assembled.
type Chart struct {
	From    []string       `json:"from"`
	Values  map[string]any `json:"values,omitempty"`
	Overlay string         `json:"overlay,omitempty"`
	// Remove lists chart files (slash-separated globs) deleted after the
	// overlay is applied; a pattern that matches nothing is an error.
	Remove  []string   `json:"remove,omitempty"`
	Exclude []Selector `json:"exclude,omitempty"`
	Patches []Patch    `json:"patches,omitempty"`
	CRDsDir bool       `json:"crdsDir,omitempty"`
	Steps   []Step     `json:"steps,omitempty"`
}

// Selector matches manifests by kind and name; an empty field matches any.
type Selector struct {
	Kind string `json:"kind,omitempty"`
	Name string `json:"name,omitempty"`
}

// Patch changes the manifests a selector matches. Exactly one of Merge
// (RFC 7386), Strategic (Kubernetes strategic merge) or JSON6902 is set.
type Patch struct {
	Kind      string         `json:"kind,omitempty"`
	Name      string         `json:"name,omitempty"`
	Merge     map[string]any `json:"merge,omitempty"`
	Strategic map[string]any `json:"strategic,omitempty"`
	JSON6902  []JSONPatchOp  `json:"json6902,omitempty"`
}

// JSONPatchOp is one RFC 6902 operation.
type JSONPatchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	From  string          `json:"from,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Step runs a step plugin on the finished chart directory.
type Step struct {
	Plugin string          `json:"plugin"`
	With   json.RawMessage `json:"with,omitempty"`
}

// Package is spec.package: the metadata subscribers see. Version, Build and
// SourceRef exist only so that setting them is reported clearly: they come
// from the build.
type Package struct {
	Version     string            `json:"version,omitempty"`
	Build       int               `json:"build,omitempty"`
	SourceRef   *spec.SourceRef   `json:"sourceRef,omitempty"`
	Provides    []string          `json:"provides,omitempty"`
	Conflicts   []string          `json:"conflicts,omitempty"`
	CRDs        []string          `json:"crds,omitempty"`
	Permissions *spec.Permissions `json:"permissions,omitempty"`
	Rollback    *spec.Rollback    `json:"rollback,omitempty"`
	Variants    []spec.Variant    `json:"variants,omitempty"`
	Images      []string          `json:"images,omitempty"`
}

// Meta reports whether the recipe builds no chart (a meta package).
func (r *Recipe) Meta() bool { return len(r.Spec.Charts) == 0 }

// Description returns the kubepkg.dev/description annotation.
func (r *Recipe) Description() string { return r.Metadata.Annotations[AnnotationDescription] }

// Home returns the kubepkg.dev/home annotation.
func (r *Recipe) Home() string { return r.Metadata.Annotations[AnnotationHome] }
