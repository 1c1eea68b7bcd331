package siteread

import (
	"context"
	"errors"
	"fmt"
	"time"

	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// MaxSidecarSize caps a build info, provenance or SBOM file read from
// beside a site's index.
const MaxSidecarSize = 16 << 20

// Published is a published index read and verified as a subscriber does,
// with the site it came from (for the files beside it).
type Published struct {
	Site     *Site
	Verified *trust.Verified
}

// ReadIndex fetches the index at ref (a site directory, a path of its
// index.yaml or an http(s) URL) with its signature and, when trust pins
// root keys, the root chain, and verifies it as a subscriber does: an
// expired index is refused. Every command that reads a published index
// for its content (sbom, scan) reads it here; a refusal is an
// *index.VerificationError.
func ReadIndex(ctx context.Context, ref string, trust *trust.Trust, opts ...Option) (*Published, error) {
	return ReadIndexAt(ctx, ref, trust, time.Now(), opts...)
}

// ReadIndexAt is ReadIndex with expiry checked at the reference time now
// rather than the clock: a promotion or matrix that states the time it
// checks evidence at checks the index at the same time.
func ReadIndexAt(ctx context.Context, ref string, tr *trust.Trust, now time.Time, opts ...Option) (*Published, error) {
	site, err := Open(ref, opts...)
	if err != nil {
		return nil, err
	}
	v, err := site.Verify(ctx, tr, trust.VerifyOptions{Now: now})
	var ve *trust.VerificationError
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, fmt.Errorf("index: %w", err)
	case errors.As(err, &ve):
		return nil, fmt.Errorf("index %s refused: %w", site.Location(site.IndexName()), err)
	case err != nil:
		return nil, fmt.Errorf("index %s: %w", site.Location(site.IndexName()), err)
	}
	return &Published{Site: site, Verified: v}, nil
}

// Open returns the site at ref (a directory, a path of its index.yaml or
// an http(s) URL) for reading as a subscriber: its Verify checks
// index.yaml.sig as kubepkg does, and the signature by the index's digest
// (sitelayout.ByHashSignatureFile) too when the site has one — an extra check, never
// a substitute.
func Open(ref string, opts ...Option) (*Site, error) {
	return New(ref, append(opts, WithSignatureFor(sitelayout.ByHashSignatureOf))...)
}

// BuildInfo returns the build info of a version from beside the index,
// found false when the site has none.
func (p *Published) BuildInfo(ctx context.Context, name, version string, build int) (data []byte, found bool, err error) {
	data, err = p.Site.Fetch(ctx, sitelayout.BuildInfoFile(name, version, build), MaxSidecarSize)
	if errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	return data, err == nil, err
}

// ReadBuildInfo returns the decoded build info of a version from beside
// the index, nil when the site has none.
func (p *Published) ReadBuildInfo(ctx context.Context, name, version string, build int) (*spec.BuildInfo, error) {
	data, found, err := p.BuildInfo(ctx, name, version, build)
	if err != nil || !found {
		return nil, err
	}
	info := new(spec.BuildInfo)
	if err := dist.Unmarshal(data, info); err != nil {
		return nil, fmt.Errorf("%s: %w", p.Site.Location(sitelayout.BuildInfoFile(name, version, build)), err)
	}
	return info, nil
}
