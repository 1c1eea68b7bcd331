package sbom

import (
	"fmt"
	"strings"
)

// imageRef is a container image reference split into its parts.
type imageRef struct {
	// Registry is the registry host (and port), Repository the path in it.
	Registry   string
	Repository string
	// Tag and Digest may each be empty; Digest is "sha256:<hex>".
	Tag    string
	Digest string
}

// parseImageRef splits registry/repo[:tag][@sha256:<hex>]. A reference
// without a registry host is Docker Hub's, as docker reads it; package
// images are expected in full form.
func parseImageRef(s string) (imageRef, error) {
	var r imageRef
	base := s
	if i := strings.IndexByte(s, '@'); i >= 0 {
		base, r.Digest = s[:i], s[i+1:]
		if _, err := sha256Hex(r.Digest); err != nil {
			return imageRef{}, fmt.Errorf("image %s: %w", s, err)
		}
	}
	if c := strings.LastIndexByte(base, ':'); c > strings.LastIndexByte(base, '/') {
		base, r.Tag = base[:c], base[c+1:]
		if r.Tag == "" {
			return imageRef{}, fmt.Errorf("image %q: empty tag; expected registry/repository[:tag]@sha256:<hex>", s)
		}
	}
	first, rest, found := strings.Cut(base, "/")
	if found && (strings.ContainsAny(first, ".:") || first == "localhost") {
		r.Registry, r.Repository = first, rest
	} else {
		r.Registry, r.Repository = "docker.io", base
		if !found {
			r.Repository = "library/" + base
		}
	}
	if r.Repository == "" || strings.HasPrefix(r.Repository, "/") || strings.HasSuffix(r.Repository, "/") || strings.Contains(r.Repository, "//") {
		return imageRef{}, fmt.Errorf("image %q: expected registry/repository[:tag]@sha256:<hex>", s)
	}
	return r, nil
}

// Pinned reports whether the reference names a manifest by digest.
func (r imageRef) Pinned() bool { return r.Digest != "" }

// RepositoryURL returns registry/repository.
func (r imageRef) RepositoryURL() string { return r.Registry + "/" + r.Repository }

// String returns the reference in full form.
func (r imageRef) String() string {
	s := r.RepositoryURL()
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// sha256Hex returns the hex part of "sha256:<64 hex>".
func sha256Hex(d string) (string, error) {
	h, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
		return "", fmt.Errorf("digest %q: expected sha256:<64 lowercase hex digits>", d)
	}
	return h, nil
}

// ociPURL returns pkg:oci/<name>[@<digest>]?repository_url=<url>[&tag=<tag>]
// where name is the last element of repositoryURL. The digest's ':' is
// escaped; '/' and ':' in qualifier values are kept, as in the purl
// specification's examples.
func ociPURL(repositoryURL, digest, tag string) string {
	name := repositoryURL[strings.LastIndexByte(repositoryURL, '/')+1:]
	var b strings.Builder
	b.WriteString("pkg:oci/")
	b.WriteString(purlEscape(strings.ToLower(name), ""))
	if digest != "" {
		b.WriteString("@")
		b.WriteString(purlEscape(digest, ""))
	}
	b.WriteString("?repository_url=")
	b.WriteString(purlEscape(repositoryURL, "/:"))
	if tag != "" {
		b.WriteString("&tag=")
		b.WriteString(purlEscape(tag, ""))
	}
	return b.String()
}

// purlEscape percent-encodes every byte of s except ASCII letters, digits,
// "-._~" and the bytes in keep.
func purlEscape(s, keep string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 || strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// ociTag returns a chart version as an OCI tag: '+' becomes '_', as Helm
// pushes it.
func ociTag(version string) string { return strings.ReplaceAll(version, "+", "_") }
