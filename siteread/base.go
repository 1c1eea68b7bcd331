package siteread

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/trust"
)

// Base is the published index a publish extends, verified.
type Base struct {
	// Site is where it was read from.
	Site *Site
	// Verified is what verification found; its Index is nil (the versions
	// went into the Builder).
	Verified *trust.Verified
	// Digest is "sha256:<hex>" of the index bytes that were verified.
	Digest string
}

// ErrNoBase is wrapped by LoadBase's error when there is no published
// index and a new one may not be started.
var ErrNoBase = errors.New("no published index")

// ErrRootExists is wrapped by WriteRootVersion's error for a new root of
// trust where a root already is: a root changes only by its next version.
var ErrRootExists = errors.New("refusing to overwrite a root of trust")

// LoadBase fetches the index at ref (a site directory, a path of its
// index.yaml or an http(s) URL), verifies it with trust as a subscriber
// does — the root chain when trust has a root, the signatures, every spec
// digest — and adds every version of it to b. An expired base is accepted
// (re-signing it is how its expiry is renewed), with a warning. A missing
// index gives a nil Base when allowNew, else an error wrapping ErrNoBase.
// This is the one path by which publish, repo index and repo withdraw read
// what they extend: nothing unverified is ever re-signed.
//
// each, when not nil, is given every package of the base as it is added
// (see index.Builder.AddVerifiedFunc).
func LoadBase(ctx context.Context, ref string, tr *trust.Trust, allowNew bool, b *index.Builder, each func(string, *index.IndexPackage) error, opts ...Option) (*Base, error) {
	site, err := New(ref, append(opts, WithSignatureFor(sitelayout.ByHashSignatureOf))...)
	if err != nil {
		return nil, err
	}
	loc := site.Location(site.IndexName())
	var rerr error
	switch {
	case tr.TrustedRoot != nil:
		rerr = site.Roots(ctx, tr, tr.TrustedRoot.Signed.Version)
	case len(tr.RootKeys) > 0 && tr.Latest == nil:
		rerr = site.Roots(ctx, tr, 1)
	}
	if rerr != nil {
		return nil, fmt.Errorf("the published index %s: %w", loc, rerr)
	}
	vopts := trust.VerifyOptions{Now: time.Now(), AllowExpired: true}
	// index.yaml.sig first, as kubepkg reads it: a missing, malformed or
	// foreign one is refused before the index is read.
	data, sig, err := site.IndexChecked(ctx, func(sig []byte) error { return trust.PrecheckIndexSignature(sig, tr, vopts) })
	var ve *trust.VerificationError
	switch {
	case errors.Is(err, ErrNotFound) && allowNew:
		return nil, nil
	case errors.Is(err, ErrNotFound):
		return nil, fmt.Errorf("%w: the published index %s does not exist", ErrNoBase, loc)
	case errors.As(err, &ve):
		return nil, fmt.Errorf("the published index %s failed verification, so nothing was published or re-signed (its body was not read): %w", loc, site.Explain(ctx, nil, err))
	case err != nil:
		return nil, fmt.Errorf("reading the published index: %w", err)
	}
	defer Release(data) // the compact Builder keeps nothing of it
	sum := sha256.Sum256(data)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	v, err := trust.AddVerifiedFunc(b, data, sig, tr, vopts, each)
	if errors.As(err, &ve) {
		return nil, fmt.Errorf("the published index %s failed verification, so nothing was published or re-signed: %w", loc, site.Explain(ctx, data, err))
	}
	if err != nil {
		return nil, fmt.Errorf("the published index %s: %w", loc, err)
	}
	if err := site.CheckByHash(ctx, data, v); err != nil {
		return nil, fmt.Errorf("the published index %s failed verification, so nothing was published or re-signed: %w", loc, err)
	}
	return &Base{Site: site, Verified: v, Digest: digest}, nil
}
