package recipe

import (
	"github.com/google/go-containerregistry/pkg/name"

	"kbuild.dev/kbuild/spec"
)

// Image is a container image reference in the one normal form kbuild
// writes and compares everywhere (init, images, validate, render):
// registry/repository[:tag][@digest], with Docker Hub spelled docker.io and
// its official images library/NAME. A reference with neither tag nor digest
// means :latest, as a container runtime reads it.
type Image struct {
	// Repository is registry/repository, e.g. docker.io/library/nginx.
	Repository string
	// Tag is the tag ("latest" when the reference had neither tag nor
	// digest), or "" for a reference by digest alone.
	Tag string
	// Digest is "sha256:<hex>", or "".
	Digest string
}

// ParseImage parses ref with go-containerregistry's name package
// (spec.ParseImageRef) and returns it in normal form.
func ParseImage(ref string) (Image, error) {
	r, err := spec.ParseImageRef(ref)
	if err != nil {
		return Image{}, err
	}
	im := Image{Repository: r.Name(), Tag: r.Tag, Digest: r.Digest}
	if im.Tag == "" && im.Digest == "" {
		im.Tag = name.DefaultTag
	}
	return im, nil
}

// String returns registry/repository[:tag][@digest].
func (im Image) String() string {
	s := im.Repository
	if im.Tag != "" {
		s += ":" + im.Tag
	}
	if im.Digest != "" {
		s += "@" + im.Digest
	}
	return s
}

// WithDigest returns the image pinned to digest, keeping its tag.
func (im Image) WithDigest(digest string) Image {
	im.Digest = digest
	return im
}

// NormalizeImage writes ref in normal form (see Image); a reference that
// does not parse is returned as it is.
func NormalizeImage(ref string) string {
	im, err := ParseImage(ref)
	if err != nil {
		return ref
	}
	return im.String()
}
