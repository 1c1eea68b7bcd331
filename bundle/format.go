package bundle

import (
	"fmt"
	"strings"
	"time"

	"kbuild.dev/kbuild/bundle/nodeconfig"
	"kbuild.dev/kbuild/spec"
)

// Media types, artifact types and annotations of a bundle.
const (
	// ArtifactType is the artifact type of the bundle's top image index.
	ArtifactType = "application/vnd.kbuild.bundle.v1"
	// FileMediaType is the media type of a metadata layer (a file of the
	// signed site or bundle.json); its title annotation is the file's path.
	FileMediaType = "application/vnd.kbuild.bundle.file.v1"
	// AnnotationKind is "metadata", "chart" or "image" on each manifest of
	// the bundle's index.
	AnnotationKind = "dev.kbuild.bundle.kind"
	// AnnotationRef is the original reference of a chart (oci://…:tag) or
	// image (registry/repo:tag@sha256:…).
	AnnotationRef = "dev.kbuild.bundle.ref"
	// AnnotationTitle names a metadata layer's file.
	AnnotationTitle = "org.opencontainers.image.title"
	// AnnotationRefName is the OCI layout's name of the bundle index.
	AnnotationRefName = "org.opencontainers.image.ref.name"
	// ContentsFile is the metadata file that lists what the bundle holds.
	ContentsFile = "bundle.json"

	kindMetadata = "metadata"
	kindChart    = "chart"
	kindImage    = "image"

	ociIndex    = "application/vnd.oci.image.index.v1+json"
	ociManifest = "application/vnd.oci.image.manifest.v1+json"
	ociConfig   = "application/vnd.oci.image.config.v1+json"
	dockerList  = "application/vnd.docker.distribution.manifest.list.v2+json"
	dockerImage = "application/vnd.docker.distribution.manifest.v2+json"
)

// Contents is bundle.json: when the bundle was made and what it holds.
// Import checks every entry against the signed index; nothing here is
// trusted on its own.
type Contents struct {
	// Created is SOURCE_DATE_EPOCH, or the index's generated time.
	Created time.Time `json:"created"`
	// Index is the index file's digest (sha256 of index.yaml).
	Index string `json:"index"`
	// Packages are the chosen versions, sorted by name.
	Packages []Package `json:"packages"`
	// Charts and Images are sorted by reference.
	Charts []Chart `json:"charts"`
	Images []Image `json:"images"`
	// Files are the metadata files besides bundle.json, sorted.
	Files []string `json:"files"`
	// Platforms, when set, filtered multi-platform images.
	Platforms []string `json:"platforms,omitempty"`
}

// Package is one chosen package version and why it is in the bundle.
type Package struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Build   int    `json:"build"`
	// Digest is the spec digest in the index.
	Digest string `json:"digest"`
	// Reason is "requested" or "required by NAME VERSION".
	Reason string `json:"reason"`
}

// Chart is a chart pinned by a chosen version.
type Chart struct {
	// Ref is repository/name:tag without oci://.
	Ref string `json:"ref"`
	// Digest is the pinned archive digest; Manifest the digest of the
	// chart's OCI manifest in the bundle.
	Digest   string `json:"digest"`
	Manifest string `json:"manifest"`
	// PinnedBy are "name version build N" of the versions pinning it.
	PinnedBy []string `json:"pinnedBy"`
}

// Image is an image pinned by a chosen version.
type Image struct {
	// Ref is the pinned reference, registry/repo:tag@sha256:….
	Ref    string `json:"ref"`
	Digest string `json:"digest"`
	// MediaType is the pinned manifest's; an index is kept whole unless
	// Platforms lists which of its images the bundle holds.
	MediaType string   `json:"mediaType"`
	Platforms []string `json:"platforms,omitempty"`
	// Size is the sum of the sizes of its blobs in the bundle.
	Size     int64    `json:"size"`
	PinnedBy []string `json:"pinnedBy"`
}

// ImageRef is a parsed image reference pinned by digest.
type ImageRef = spec.ImageRef

// ParseImageRef parses registry/repo[:tag]@sha256:<hex> with
// spec.ParseImageRef (go-containerregistry's name package). A reference
// without a registry host is docker.io's, as Docker and containerd read it.
func ParseImageRef(s string) (ImageRef, error) {
	if _, dg, ok := strings.Cut(s, "@"); !ok || !validDigest(dg) {
		return ImageRef{}, fmt.Errorf("image %q is not pinned by digest (registry/repo:tag@sha256:<64 hex>)", s)
	}
	return spec.ParseImageRef(s)
}

// MirrorPath is where a repository of registry lives under a mirror's
// path: PATH/<registry>/<repository>, the registry's ':' written '_' (a
// repository path may not hold ':'). It is the layout containerd's
// override_path mirrors expect.
func MirrorPath(path, registry, repository string) string {
	return nodeconfig.Mirror{Path: path}.Prefix(registry) + "/" + repository
}

func validDigest(d string) bool {
	_, err := spec.ParseDigest(d)
	return err == nil
}
