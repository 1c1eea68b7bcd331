package keyless

import (
	"bytes"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"

	"kbuild.dev/kbuild/sigbundle"
)

// ErrVerify is wrapped by Verify's errors about the bundle (not about its
// inputs).
var ErrVerify = errors.New("keyless bundle does not verify")

// CertificateIdentity is the identity a Fulcio certificate was issued
// for: its subject alternative name and its OIDC issuer extension.
func CertificateIdentity(cert *x509.Certificate) (Identity, error) {
	s, err := certificate.SummarizeCertificate(cert)
	if err != nil {
		return Identity{}, err
	}
	id := Identity{Issuer: s.Issuer, Subject: s.SubjectAlternativeName, Repository: s.GithubWorkflowRepository}
	return id, id.Validate()
}

// ParseTrustedRoot parses a Sigstore trusted root (trusted_root.json, as
// `cosign trusted-root create` writes it or the public instance's TUF
// repository serves it), for WithTrustedRoot and VerifyOptions.
func ParseTrustedRoot(data []byte) (*root.TrustedRoot, error) {
	tr, err := root.NewTrustedRootFromJSON(data)
	if err != nil {
		return nil, fmt.Errorf("sigstore trusted root: %w", err)
	}
	return tr, nil
}

// VerifyOptions is what Verify checks a bundle against.
type VerifyOptions struct {
	// TrustedRoot holds the Fulcio CAs, Rekor logs and CT logs trusted.
	TrustedRoot root.TrustedMaterial
	// Identity is the only identity accepted (its Repository, when set,
	// too).
	Identity Identity
	// IgnoreSCT skips the certificate-transparency check (cosign's
	// --insecure-ignore-sct), for CAs whose trusted root names no CT log.
	IgnoreSCT bool
}

// IsKeyless reports whether data is a Sigstore bundle whose verification
// material is a certificate (rather than a public-key hint).
func IsKeyless(data []byte) bool {
	var b struct {
		VerificationMaterial map[string]json.RawMessage `json:"verificationMaterial"`
	}
	if json.Unmarshal(data, &b) != nil {
		return false
	}
	_, cert := b.VerificationMaterial["certificate"]
	_, chain := b.VerificationMaterial["x509CertificateChain"]
	return cert || chain
}

// Verify checks the keyless bundle data as cosign verify does for a
// certificate identity: the certificate chains to a CA of the trusted
// root and was issued for o.Identity, the signature is in a trusted
// Rekor log at a time the certificate was valid, and the DSSE envelope
// signs an in-toto statement about digest ("sha256:<hex>"). It returns
// the statement.
func Verify(data []byte, digest string, o VerifyOptions) (*sigbundle.Statement, error) {
	if len(data) > sigbundle.MaxBundleSize {
		return nil, fmt.Errorf("%w: %d bytes, more than the %d allowed", ErrVerify, len(data), sigbundle.MaxBundleSize)
	}
	hexd, ok := strings.CutPrefix(digest, "sha256:")
	raw, err := hex.DecodeString(hexd)
	if !ok || err != nil || len(raw) != 32 {
		return nil, fmt.Errorf("digest %q is not sha256:<64 hex>", digest)
	}
	if o.TrustedRoot == nil {
		return nil, errors.New("keyless verification needs a trusted root")
	}
	if err := o.Identity.Validate(); err != nil {
		return nil, err
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrVerify, err)
	}
	vopts := []verify.VerifierOption{verify.WithTransparencyLog(1), verify.WithIntegratedTimestamps(1)}
	if !o.IgnoreSCT {
		vopts = append(vopts, verify.WithSignedCertificateTimestamps(1))
	}
	v, err := verify.NewVerifier(o.TrustedRoot, vopts...)
	if err != nil {
		return nil, err
	}
	san, err := verify.NewSANMatcher(o.Identity.Subject, "")
	if err != nil {
		return nil, err
	}
	iss, err := verify.NewIssuerMatcher(o.Identity.Issuer, "")
	if err != nil {
		return nil, err
	}
	want, err := verify.NewCertificateIdentity(san, iss, certificate.Extensions{GithubWorkflowRepository: o.Identity.Repository})
	if err != nil {
		return nil, err
	}
	if _, err := v.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", raw), verify.WithCertificateIdentity(want))); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrVerify, err)
	}
	env := b.GetDsseEnvelope()
	if env == nil || env.PayloadType != sigbundle.InTotoPayloadType {
		return nil, fmt.Errorf("%w: want a DSSE envelope of %s", ErrVerify, sigbundle.InTotoPayloadType)
	}
	var st sigbundle.Statement
	dec := json.NewDecoder(bytes.NewReader(env.Payload))
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("%w: statement: %v", ErrVerify, err)
	}
	if !st.About(digest) {
		return nil, fmt.Errorf("%w: the %s statement is not about %s", ErrVerify, st.PredicateType, digest)
	}
	return &st, nil
}
