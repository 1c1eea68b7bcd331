// Package trust says whether a published index may be believed: ed25519
// keys and signatures, the TUF-style root of trust and its chain of
// versions, delegations of packages to other keys, DSSE envelopes, and
// Verify, which checks an index as a kubepkg subscriber does, in the
// subscriber's order: the root chain, the signatures over the exact bytes,
// and only then the content.
//
// It does no network or file I/O and never reads key files: callers pass
// bytes, signers and reference times in. The contract is kubepkg's:
// its repository guide (github.com/tym83/kubepkg, docs/guides/repositories.md)
// and its reader (pkg/repo), which internal/kubepkgclient encodes for the
// tests.
//
// What is where:
//   - keys.go: keys (PEM PKCS #8 / PKIX), keyids, Signer and Verifier.
//   - sign.go: signing, thresholds and the version statements delegated
//     keys sign (the signature file's form is index.Signature's).
//   - stream.go: SignParts, the same signatures over a message held in
//     parts (an index as the Builder lays it out), never joined.
//   - root.go: roots of trust (new, next, sign, canonical signed bytes).
//   - verify.go, errors.go: what a subscriber checks, and
//     *VerificationError for refusals.
//   - verifiedbase.go: publishing over a verified base (AddVerifiedFunc,
//     AddBase), through index.Builder's published-base methods.
//   - dsse.go: DSSE envelopes for attestations and provenance.
package trust
