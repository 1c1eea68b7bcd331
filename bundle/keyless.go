package bundle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sigstore/sigstore-go/pkg/root"

	"kbuild.dev/kbuild/keyless"
	"kbuild.dev/kbuild/sigbundle"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// The keyless material a bundle carries beside the charts' keyless
// Sigstore bundles: the Sigstore trusted root they were verified against
// (WithTrustedRoot) and the identity the site names
// (sitelayout.KeylessFile). A cosign in the air gap verifies the mirrored
// charts with that trusted root (--trusted-root) and identity.
const (
	sigstoreTrustedRoot = sigstoreDir + "trusted_root.json"
	sigstoreIdentity    = sigstoreDir + "keyless.json"
)

// WithTrustedRoot gives Create the Sigstore trusted root (trusted_root.json,
// as `cosign trusted-root create` or the public instance's TUF repository
// has it) that the charts' keyless signatures are verified against: those
// that verify for the identity the site names are carried, with the
// trusted root and the identity, and Import checks them again. A trusted
// root that names no certificate-transparency log cannot check SCTs, and
// then none is required. Default: keyless signatures are left out, with a
// note.
func WithTrustedRoot(data []byte) Option { return func(o *options) { o.trustedRoot = data } }

// keylessCheck is what keyless Sigstore bundles are verified against.
type keylessCheck struct {
	root, identity []byte
	opts           keyless.VerifyOptions
}

// newKeylessCheck parses a trusted root and an identity (JSON as
// sitelayout.KeylessFile holds it).
func newKeylessCheck(rootJSON, identity []byte) (*keylessCheck, error) {
	tr, err := root.NewTrustedRootFromJSON(rootJSON)
	if err != nil {
		return nil, fmt.Errorf("the Sigstore trusted root: %w", err)
	}
	var id sigbundle.Identity
	if err := json.Unmarshal(identity, &id); err != nil {
		return nil, fmt.Errorf("keyless identity: %w", err)
	}
	if err := id.Validate(); err != nil {
		return nil, err
	}
	return &keylessCheck{root: rootJSON, identity: identity, opts: keyless.VerifyOptions{TrustedRoot: tr, Identity: id, IgnoreSCT: len(tr.CTLogs()) == 0}}, nil
}

// siteKeyless is the keyless check of Create: WithTrustedRoot's trusted
// root and the identity the site names; nil without a trusted root or
// when the site names no identity (said in a note).
func siteKeyless(ctx context.Context, s *siteread.Site, o *options) (*keylessCheck, error) {
	if o.trustedRoot == nil {
		return nil, nil
	}
	id, err := s.Fetch(ctx, sitelayout.KeylessFile, 64<<10)
	if errors.Is(err, siteread.ErrNotFound) {
		o.logf("note: the site names no keyless identity (%s): keyless signatures are left out", sitelayout.KeylessFile)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	kc, err := newKeylessCheck(o.trustedRoot, id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sitelayout.KeylessFile, err)
	}
	return kc, nil
}

// bundledKeyless is the keyless check of Import: the trusted root and
// identity the bundle carries; nil when it carries none.
func bundledKeyless(b *opened) (*keylessCheck, error) {
	rootJSON, id := b.files[sigstoreTrustedRoot], b.files[sigstoreIdentity]
	if rootJSON == nil && id == nil {
		return nil, nil
	}
	if rootJSON == nil || id == nil {
		return nil, bad(b.file, "it carries one of %s and %s without the other", sigstoreTrustedRoot, sigstoreIdentity)
	}
	kc, err := newKeylessCheck(rootJSON, id)
	if err != nil {
		return nil, bad(b.file, "%v", err)
	}
	return kc, nil
}

// openSigstore checks one Sigstore bundle about digest: a keyless one
// against kc (an error without kc), a key-signed one against keys.
func openSigstore(data []byte, digest string, keys []trust.Verifier, kc *keylessCheck) error {
	if keyless.IsKeyless(data) {
		if kc == nil {
			return ErrNoTrustedRoot
		}
		_, err := keyless.Verify(data, digest, kc.opts)
		return err
	}
	_, _, err := sigbundle.Open(data, digest, keys)
	return err
}
