package spec

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// ParseDigest parses a content digest as kbuild pins charts, images and
// specs: "sha256:" and 64 lowercase hex digits. It is go-containerregistry's
// v1.NewHash held to sha256, the one algorithm kubepkg and the index
// format use. (This file belongs with the spec types.)
func ParseDigest(d string) (v1.Hash, error) {
	h, err := v1.NewHash(d)
	if err != nil {
		return v1.Hash{}, err
	}
	if h.Algorithm != "sha256" {
		return v1.Hash{}, fmt.Errorf("digest %q uses %s; want sha256", d, h.Algorithm)
	}
	return h, nil
}
