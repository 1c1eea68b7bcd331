package sbom

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/package-url/packageurl-go"

	"kbuild.dev/kbuild/spec"
)

// parseImageRef splits registry/repo[:tag][@sha256:<hex>] with
// spec.ParseImageRef (go-containerregistry's name package). A reference
// without a registry host is Docker Hub's, as docker reads it; package
// images are expected in full form.
func parseImageRef(s string) (spec.ImageRef, error) {
	base, dig, pinned := strings.Cut(s, "@")
	if pinned {
		if _, err := sha256Hex(dig); err != nil {
			return spec.ImageRef{}, fmt.Errorf("image %s: %w", s, err)
		}
	}
	if strings.HasSuffix(base, ":") {
		return spec.ImageRef{}, fmt.Errorf("image %q: empty tag; expected registry/repository[:tag]@sha256:<hex>", s)
	}
	r, err := spec.ParseImageRef(s)
	if err != nil {
		return spec.ImageRef{}, fmt.Errorf("%w; expected registry/repository[:tag]@sha256:<hex>", err)
	}
	return r, nil
}

// sha256Hex returns the hex part of "sha256:<64 hex>".
func sha256Hex(d string) (string, error) {
	h, err := spec.ParseDigest(d)
	if err != nil {
		return "", fmt.Errorf("digest %q: expected sha256:<64 lowercase hex digits>", d)
	}
	return h.Hex, nil
}

// ociPURL returns the package URL of an OCI artifact,
// pkg:oci/<name>[@<digest>]?repository_url=<url>[&tag=<tag>], where name
// is the last element of repositoryURL, lowercased as the oci type
// requires. packageurl-go writes it in the purl specification's canonical
// form: ':' is left as it is, '/' in a qualifier value is percent-encoded.
func ociPURL(repositoryURL, digest, tag string) string {
	name := repositoryURL[strings.LastIndexByte(repositoryURL, '/')+1:]
	q := packageurl.Qualifiers{{Key: "repository_url", Value: repositoryURL}}
	if tag != "" {
		q = append(q, packageurl.Qualifier{Key: "tag", Value: tag})
	}
	return packageurl.NewPackageURL(packageurl.TypeOCI, "", strings.ToLower(name), digest, q, "").ToString()
}

// ociTag returns a chart version as an OCI tag: '+' becomes '_', as Helm
// pushes it.
func ociTag(version string) string { return strings.ReplaceAll(version, "+", "_") }

// ociRef returns the bom-ref of an OCI artifact component: kind, the
// purl's name and 16 hex digits of the purl's SHA-256, such as
// image:virt-api-3f1c9a0b2d4e6f80. It is the same for the same purl in
// any BOM (a repository BOM lists an image several packages run once)
// and a fraction of the purl's length: a bom-ref is written once per
// component and once per dependency on it, and the purl itself stays in
// the component's purl field.
func ociRef(kind, purl string) string {
	name := strings.TrimPrefix(purl, "pkg:oci/")
	if i := strings.IndexAny(name, "@?"); i >= 0 {
		name = name[:i]
	}
	sum := sha256.Sum256([]byte(purl))
	return kind + ":" + name + "-" + hex.EncodeToString(sum[:8])
}
