package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
)

// The types below are the PackageSource spec exactly as kubepkg encodes it.
// Field order and omitempty matter: the spec digest is the sha256 of the
// compact encoding/json form of these structs, so changing an order or a tag
// changes every published digest. SpecFields (fields.go) is the table of
// those tags; TestSpecFieldsMatchTags keeps the two equal. A field without
// omitempty is written even when empty: "" for a string, null for a nil
// list and [] for an empty one (PolicyRule.Verbs).

// PackageSpec is the spec of a PackageSource build record and of an index
// version entry.
type PackageSpec struct {
	Version     string       `json:"version,omitempty"`
	Build       int          `json:"build,omitempty"`
	SourceRef   *SourceRef   `json:"sourceRef,omitempty"`
	Provides    []string     `json:"provides,omitempty"`
	Conflicts   []string     `json:"conflicts,omitempty"`
	CRDs        []string     `json:"crds,omitempty"`
	Permissions *Permissions `json:"permissions,omitempty"`
	Rollback    *Rollback    `json:"rollback,omitempty"`
	Variants    []Variant    `json:"variants,omitempty"`
	Images      []string     `json:"images,omitempty"`
}

// SourceRef points at the object a package was read from.
type SourceRef struct {
	Kind      string `json:"kind"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	URL       string `json:"url,omitempty"`
	Path      string `json:"path,omitempty"`
}

// Permissions declares the RBAC a package needs.
type Permissions struct {
	ClusterWide bool         `json:"clusterWide,omitempty"`
	Rules       []PolicyRule `json:"rules,omitempty"`
}

// PolicyRule is an RBAC rule.
type PolicyRule struct {
	Verbs           []string `json:"verbs"`
	APIGroups       []string `json:"apiGroups,omitempty"`
	Resources       []string `json:"resources,omitempty"`
	ResourceNames   []string `json:"resourceNames,omitempty"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
}

// Rollback says whether a package may be downgraded. A declared rollback
// with Safe false encodes as {} and differs from an undeclared one.
type Rollback struct {
	Safe bool `json:"safe,omitempty"`
}

// Variant is one way of installing a package.
type Variant struct {
	Name       string        `json:"name"`
	DependsOn  []string      `json:"dependsOn,omitempty"`
	Requires   []Requirement `json:"requires,omitempty"`
	Libraries  []Library     `json:"libraries,omitempty"`
	Components []Component   `json:"components,omitempty"`
}

// Requirement names a package or capability a variant needs.
type Requirement struct {
	Package    string `json:"package,omitempty"`
	Capability string `json:"capability,omitempty"`
	Version    string `json:"version,omitempty"`
	Optional   bool   `json:"optional,omitempty"`
}

// Library is a named path shared between components.
type Library struct {
	Name string `json:"name,omitempty"`
	Path string `json:"path"`
}

// Component is one Helm release of a variant. In a recipe Path names a
// chart key; in a build record and an index Chart replaces it.
type Component struct {
	Name        string    `json:"name"`
	Path        string    `json:"path,omitempty"`
	Chart       *ChartRef `json:"chart,omitempty"`
	Install     *Install  `json:"install,omitempty"`
	Libraries   []string  `json:"libraries,omitempty"`
	ValuesFiles []string  `json:"valuesFiles,omitempty"`
}

// ChartRef pins a chart in an OCI repository by its archive digest.
type ChartRef struct {
	Repository string `json:"repository"`
	Name       string `json:"name"`
	Version    string `json:"version"`
	Digest     string `json:"digest,omitempty"`
}

// Install holds how a component is installed.
type Install struct {
	ReleaseName      string        `json:"releaseName,omitempty"`
	Namespace        string        `json:"namespace,omitempty"`
	Privileged       bool          `json:"privileged,omitempty"`
	DependsOn        []string      `json:"dependsOn,omitempty"`
	UpgradeCRDs      string        `json:"upgradeCRDs,omitempty"`
	WaitStrategy     string        `json:"waitStrategy,omitempty"`
	HealthCheckExprs []HealthCheck `json:"healthCheckExprs,omitempty"`
	Phase            string        `json:"phase,omitempty"`
	ReadyWhen        []ReadyWhen   `json:"readyWhen,omitempty"`
}

// HealthCheck is a CEL health expression for a kind of object.
type HealthCheck struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Current    string `json:"current"`
	InProgress string `json:"inProgress,omitempty"`
	Failed     string `json:"failed,omitempty"`
}

// ReadyWhen is a condition an object must reach before a component is ready.
type ReadyWhen struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
	Condition  string `json:"condition"`
	Status     string `json:"status,omitempty"`
}

// CanonicalJSON returns the compact encoding/json form of s that the spec
// digest covers (HTML characters escaped as encoding/json does).
func (s *PackageSpec) CanonicalJSON() ([]byte, error) {
	return json.Marshal(s)
}

// Digest returns the spec digest, "sha256:" and the hex sha256 of
// CanonicalJSON. It encodes with appendSpecJSON, which writes the same
// bytes as encoding/json faster.
func (s *PackageSpec) Digest() (string, error) {
	bp := jsonBufs.Get().(*[]byte)
	b := AppendJSON((*bp)[:0], s)
	d := DigestOf(b)
	*bp = b
	jsonBufs.Put(bp)
	return d, nil
}

// jsonBufs holds buffers for Digest's encoding.
var jsonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8192); return &b }}

// DigestOf returns the sha256 digest of b, "sha256:" and 64 hex digits.
func DigestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Requirements returns what v needs installed, as kubepkg's resolver reads
// a variant: each dependsOn entry, once, as a requirement of that package
// at any version, then the requires entries as they are.
func (v *Variant) Requirements() []Requirement {
	out := make([]Requirement, 0, len(v.DependsOn)+len(v.Requires))
	seen := map[string]bool{}
	for _, d := range v.DependsOn {
		if !seen[d] {
			seen[d] = true
			out = append(out, Requirement{Package: d})
		}
	}
	return append(out, v.Requires...)
}
