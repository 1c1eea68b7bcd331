package spec

// RecordAPIVersion and RecordKind identify a build record.
const (
	RecordAPIVersion = "kubepkg.dev/v1"
	RecordKind       = "PackageSource"
)

// PackageSource is a build record, dist/<name>-<version>-<build>.yaml: what
// one build of one recipe produced. It is what `kbuild repo index` reads.
type PackageSource struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   RecordMetadata `json:"metadata"`
	Spec       PackageSpec    `json:"spec"`
}

// RecordMetadata is the metadata of a build record.
type RecordMetadata struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// BuildInfoAPIVersion and BuildInfoKind identify a build-info document.
const (
	BuildInfoAPIVersion = "kbuild.dev/v1"
	BuildInfoKind       = "BuildInfo"
)

// BuildInfo is kbuild's account of how a build record was made, written
// beside it as dist/<name>-<version>-<build>.build.yaml so that the record
// itself stays exactly the kubepkg PackageSource. It is not covered by the
// spec digest; provenance and SBOMs are made from it.
type BuildInfo struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Package, Version and Build name the record this belongs to.
	Package string `json:"package"`
	Version string `json:"version"`
	Build   int    `json:"build"`
	// Recipe is the recipe file's path relative to the recipes root and its
	// sha256.
	Recipe       string `json:"recipe,omitempty"`
	RecipeDigest string `json:"recipeDigest,omitempty"`
	// Commit is the git commit of the recipes repository, when known.
	Commit string `json:"commit,omitempty"`
	// Builder is the kbuild that made the record: "kbuild RELEASE".
	Builder string `json:"builder,omitempty"`
	// BuilderSum is that kbuild's Go module hash (h1:…, as go.sum has
	// it) when it was installed from a module version; with Builder it
	// names the exact kbuild to rebuild with.
	BuilderSum string `json:"builderSum,omitempty"`
	// Sources are the resolved upstream inputs, sorted by name.
	Sources []ResolvedSource `json:"sources,omitempty"`
	// Charts are the packed charts, sorted by name.
	Charts []BuiltChart `json:"charts,omitempty"`
}

// ResolvedSource is one upstream input as it was fetched and verified.
type ResolvedSource struct {
	Name string `json:"name"`
	// Kind is url, chart, dir, git, image or plugin.
	Kind string `json:"kind"`
	// Origin says where the bytes came from: a URL, repository/name@version,
	// git URL@commit, image reference or plugin name.
	Origin string `json:"origin"`
	// Digest is the sha256 of the pinned content: file, chart archive,
	// image manifest, or for dir, git and plugin sources the digest of the
	// tree as kbuild hashes it.
	Digest string `json:"digest"`
}

// BuiltChart is a chart archive as packed and pushed.
type BuiltChart struct {
	Name string `json:"name"`
	// Ref is the pushed reference, oci://registry/repo/name:tag.
	Ref string `json:"ref"`
	// Digest is the sha256 of the chart archive (.tgz).
	Digest string `json:"digest"`
	// Manifest is the digest of the OCI manifest the chart was pushed as.
	Manifest string `json:"manifest"`
	// KubeVersion and APIVersions are the Kubernetes version and API set
	// (.Capabilities) the chart was rendered and checked against.
	KubeVersion string   `json:"kubeVersion,omitempty"`
	APIVersions []string `json:"apiVersions,omitempty"`
}
