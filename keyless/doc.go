// Package keyless signs in-toto statements as Sigstore bundles without a
// long-lived key, as `cosign sign` does in CI: an ephemeral ECDSA P-256
// key, a short-lived certificate from Fulcio for the OIDC identity of the
// job (in GitHub Actions, the workflow that runs: subject
// https://github.com/ORG/REPO/.github/workflows/WF.yml@REF, issuer
// https://token.actions.githubusercontent.com), and an entry in Rekor's
// transparency log whose inclusion proof and signed timestamp the bundle
// carries. Flux (verify.matchOIDCIdentity) and `cosign verify
// --certificate-identity … --certificate-oidc-issuer …` accept such a
// bundle for that identity only.
//
// The signing, the Fulcio and Rekor clients and the bundle are
// sigstore-go's (pkg/sign); this package finds the token (Token), keeps
// one certificate for as long as it is valid instead of asking Fulcio
// for one per bundle, and says which identity was signed for (Identity)
// so the catalog can tell subscribers what to pin. Verify checks a
// bundle against a trusted root and an identity, as cosign does, for
// kbuild bundle.
package keyless
