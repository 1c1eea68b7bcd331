package recipe

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
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

// ParseImage parses ref with go-containerregistry's name package and returns
// it in normal form.
func ParseImage(ref string) (Image, error) {
	r, err := name.ParseReference(ref, name.WeakValidation)
	if err != nil {
		return Image{}, fmt.Errorf("image %q: %w", ref, err)
	}
	im := Image{Repository: registryOf(r.Context()) + "/" + r.Context().RepositoryStr()}
	base, dig, _ := strings.Cut(ref, "@")
	im.Digest = dig
	if last := base[strings.LastIndex(base, "/")+1:]; strings.Contains(last, ":") {
		im.Tag = last[strings.Index(last, ":")+1:]
	} else if dig == "" {
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

// registryOf returns the registry host as people write it: Docker Hub is
// docker.io (ggcr names it index.docker.io).
func registryOf(repo name.Repository) string {
	if r := repo.RegistryStr(); r != name.DefaultRegistry {
		return r
	}
	return "docker.io"
}
