package spec

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// ImageRef is a container image reference, split as go-containerregistry's
// name package reads it, with Docker Hub spelled docker.io (ggcr says
// index.docker.io) and its official images library/NAME. (This file
// belongs with the spec types.)
type ImageRef struct {
	Registry   string // quay.io, docker.io, 127.0.0.1:5000
	Repository string // kubevirt/virt-api
	Tag        string // "" when the reference has none
	Digest     string // "sha256:<hex>", or "" when the reference has none
}

// ParseImageRef parses registry/repository[:tag][@digest] with
// name.ParseReference (weak validation: a reference without a registry is
// Docker Hub's, as Docker and containerd read it). ggcr checks a digest's
// form for its algorithm; a caller that requires sha256 checks Digest
// with ParseDigest. The tag is kept as written even when a digest pins the
// reference; no default tag is filled in.
func ParseImageRef(s string) (ImageRef, error) {
	base, dig, pinned := strings.Cut(s, "@")
	ref, err := name.ParseReference(s, name.WeakValidation)
	if err != nil {
		// ParseReference says only that it could not; the parser of the
		// form it tried says why.
		why := err
		if pinned {
			_, err = name.NewDigest(s, name.WeakValidation)
		} else {
			_, err = name.NewTag(s, name.WeakValidation)
		}
		if err != nil {
			why = err
		}
		return ImageRef{}, fmt.Errorf("image %q: %w", s, why)
	}
	repo := ref.Context()
	if err := checkHost(repo.RegistryStr()); err != nil {
		return ImageRef{}, fmt.Errorf("image %q: %w", s, err)
	}
	r := ImageRef{Registry: repo.RegistryStr(), Repository: repo.RepositoryStr(), Digest: dig}
	if r.Registry == name.DefaultRegistry {
		r.Registry = "docker.io"
	}
	if last := base[strings.LastIndexByte(base, '/')+1:]; strings.Contains(last, ":") {
		r.Tag = last[strings.IndexByte(last, ':')+1:]
	}
	return r, nil
}

// hostPattern is a registry host as containerd and Docker resolve one: a
// DNS name (labels of letters, digits and inner hyphens) or a bracketed
// IPv6 address, with an optional port. ggcr's name package accepts any
// RFC 3986 authority, "$" and "!" included, which no registry has.
var hostPattern = regexp.MustCompile(`^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::[0-9]{1,5})?$`)

// ErrBadRegistry is wrapped by ParseImageRef's error for a registry that
// is not a host name or IP address.
var ErrBadRegistry = errors.New("not a registry host")

func checkHost(host string) error {
	if !hostPattern.MatchString(host) {
		return fmt.Errorf("registry %q is not a host name or IP address with an optional port: %w", host, ErrBadRegistry)
	}
	return nil
}

// Name returns registry/repository.
func (r ImageRef) Name() string { return r.Registry + "/" + r.Repository }

// String returns registry/repository[:tag][@digest].
func (r ImageRef) String() string {
	s := r.Name()
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}
