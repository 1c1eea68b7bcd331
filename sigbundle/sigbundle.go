// Package sigbundle writes and reads the Sigstore bundles (v0.3) that
// cosign and Flux verify: an in-toto statement about one OCI manifest,
// signed in a DSSE envelope with a repository key, pushed as an OCI
// referrer of the manifest (artifactType MediaType).
//
// cosign 3 (`cosign verify --key KEY.pub --insecure-ignore-tlog`, and
// `cosign verify-attestation --type ...`), cosign 2 with
// --new-bundle-format, and Flux's source-controller (verify.provider:
// cosign with a secretRef holding the public key) find such a bundle
// through the referrers of the chart's manifest, check the DSSE
// signature with the PEM public key they were given (ed25519 keys load as
// pure Ed25519 verifiers in sigstore's signature.LoadVerifier, the same
// scheme trust signs with), and require the statement's subject digest to
// be the manifest's. A key-signed bundle has no transparency-log entry:
// cosign is told so with --insecure-ignore-tlog, which Flux sets itself
// for a public key.
//
// The key-signed format is small and fixed (a JSON object with the
// envelope and a key hint), so it is written here on trust's DSSE signing,
// byte-reproducibly, rather than with sigstore-go's signing package, whose
// Fulcio and Rekor clients serve keyless signing: package keyless uses
// them, and its bundles (KeylessSigner) travel beside these. The
// end-to-end tests judge both with the real cosign CLI.
package sigbundle

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"kbuild.dev/kbuild/trust"
)

// MediaType is a v0.3 Sigstore bundle's media type: the artifactType of
// its referrer manifest and the media type of its one layer.
const MediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// The payload and statement types of what is signed.
const (
	InTotoPayloadType   = "application/vnd.in-toto+json"
	InTotoStatementType = "https://in-toto.io/Statement/v1"
)

// Predicate types: the plain signature cosign sign writes (an empty
// predicate), and the attestations `cosign verify-attestation --type`
// selects (cyclonedx, slsaprovenance1).
const (
	SignPredicate      = "https://sigstore.dev/cosign/sign/v1"
	CycloneDXPredicate = "https://cyclonedx.org/bom"
	SLSAProvenanceV1   = "https://slsa.dev/provenance/v1"
)

// MaxBundleSize caps a bundle that Open reads: an SBOM predicate can be
// large, nothing else is.
const MaxBundleSize = 32 << 20

// Statement is an in-toto v1 statement about one artifact.
type Statement struct {
	Type          string          `json:"_type"`
	Subject       []Subject       `json:"subject"`
	PredicateType string          `json:"predicateType"`
	Predicate     json.RawMessage `json:"predicate"`
}

// Subject names an artifact and its digests.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// NewStatement returns the statement that predicate (JSON; nil for the
// empty predicate of a plain signature) of predicateType holds for the
// manifest digest ("sha256:<hex>") of repo (registry/path, no tag).
func NewStatement(repo, digest, predicateType string, predicate json.RawMessage) (*Statement, error) {
	hexd, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(hexd) != 64 {
		return nil, fmt.Errorf("subject digest %q is not sha256:<64 hex>", digest)
	}
	if _, err := hex.DecodeString(hexd); err != nil {
		return nil, fmt.Errorf("subject digest %q is not sha256:<64 hex>", digest)
	}
	if predicate == nil {
		predicate = json.RawMessage("{}")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, predicate); err != nil {
		return nil, fmt.Errorf("predicate of %s is not JSON: %w", predicateType, err)
	}
	return &Statement{
		Type:          InTotoStatementType,
		Subject:       []Subject{{Name: repo, Digest: map[string]string{"sha256": hexd}}},
		PredicateType: predicateType,
		Predicate:     compact.Bytes(),
	}, nil
}

// bundle is the JSON form of a v0.3 Sigstore bundle holding a DSSE
// envelope and a public-key hint (protobuf-specs' Bundle).
type bundle struct {
	MediaType            string               `json:"mediaType"`
	VerificationMaterial verificationMaterial `json:"verificationMaterial"`
	DSSEEnvelope         *envelope            `json:"dsseEnvelope"`
}

type verificationMaterial struct {
	PublicKey *publicKeyHint `json:"publicKey,omitempty"`
}

type publicKeyHint struct {
	Hint string `json:"hint"`
}

// envelope is a DSSE envelope as the bundle's protobuf JSON writes it:
// payload and signatures base64, one signature.
type envelope struct {
	Payload     string         `json:"payload"`
	PayloadType string         `json:"payloadType"`
	Signatures  []envSignature `json:"signatures"`
}

type envSignature struct {
	Sig   string `json:"sig"`
	KeyID string `json:"keyid,omitempty"`
}

// Sign returns the bundle of s signed by signer: one DSSE signature (a
// bundle holds exactly one), without a keyid, and the signer's keyid as
// the public-key hint. The bytes
// depend only on s and the key: ed25519 signatures are deterministic.
func Sign(s *Statement, signer trust.Signer) ([]byte, error) {
	payload, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	sig, err := signer.Sign(trust.PAE(InTotoPayloadType, payload))
	if err != nil {
		return nil, fmt.Errorf("signing the %s statement: %w", s.PredicateType, err)
	}
	b := bundle{
		MediaType:            MediaType,
		VerificationMaterial: verificationMaterial{PublicKey: &publicKeyHint{Hint: signer.KeyID()}},
		DSSEEnvelope: &envelope{
			Payload:     base64.StdEncoding.EncodeToString(payload),
			PayloadType: InTotoPayloadType,
			// No keyid in the signature, as cosign writes it: its DSSE
			// verifier skips a signature whose keyid is not the key's SSH
			// fingerprint. The key is named by the hint above.
			Signatures: []envSignature{{Sig: base64.StdEncoding.EncodeToString(sig)}},
		},
	}
	return json.Marshal(b)
}

// ErrBundle is wrapped by Open's errors.
var ErrBundle = errors.New("not a valid Sigstore bundle")

// Open decodes data as a v0.3 bundle of a DSSE-signed in-toto statement,
// checks its signature against keys and returns the statement and the
// keyid that signed it. A bundle signed by none of keys, or whose
// statement is not about digest, is an error.
func Open(data []byte, digest string, keys []trust.Verifier) (*Statement, string, error) {
	if len(data) > MaxBundleSize {
		return nil, "", fmt.Errorf("%w: %d bytes, more than the %d allowed", ErrBundle, len(data), MaxBundleSize)
	}
	var b bundle
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&b); err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrBundle, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, "", fmt.Errorf("%w: data after the JSON object", ErrBundle)
	}
	if b.MediaType != MediaType {
		return nil, "", fmt.Errorf("%w: mediaType is %q, want %q", ErrBundle, b.MediaType, MediaType)
	}
	env := b.DSSEEnvelope
	if env == nil || env.PayloadType != InTotoPayloadType || len(env.Signatures) != 1 {
		return nil, "", fmt.Errorf("%w: want a DSSE envelope of %s with one signature", ErrBundle, InTotoPayloadType)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, "", fmt.Errorf("%w: payload is not base64: %v", ErrBundle, err)
	}
	sig, err := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	if err != nil {
		return nil, "", fmt.Errorf("%w: signature is not base64: %v", ErrBundle, err)
	}
	pae := trust.PAE(InTotoPayloadType, payload)
	signedBy := ""
	for _, k := range keys {
		if k.Verify(pae, sig) {
			signedBy = k.KeyID()
			break
		}
	}
	if signedBy == "" {
		return nil, "", fmt.Errorf("%w: signed by none of the %d trusted keys (hint %q)", ErrBundle, len(keys), hint(&b))
	}
	var s Statement
	if err := json.Unmarshal(payload, &s); err != nil {
		return nil, "", fmt.Errorf("%w: statement: %v", ErrBundle, err)
	}
	if !s.About(digest) {
		return nil, "", fmt.Errorf("%w: the %s statement is about %s, not %s", ErrBundle, s.PredicateType, s.subjects(), digest)
	}
	return &s, signedBy, nil
}

// About reports whether a subject of s has digest ("sha256:<hex>").
func (s *Statement) About(digest string) bool {
	hexd := strings.TrimPrefix(digest, "sha256:")
	for _, sub := range s.Subject {
		if sub.Digest["sha256"] == hexd {
			return true
		}
	}
	return false
}

func (s *Statement) subjects() string {
	var out []string
	for _, sub := range s.Subject {
		out = append(out, "sha256:"+sub.Digest["sha256"])
	}
	if len(out) == 0 {
		return "no subject"
	}
	return strings.Join(out, ", ")
}

func hint(b *bundle) string {
	if b.VerificationMaterial.PublicKey == nil {
		return ""
	}
	return b.VerificationMaterial.PublicKey.Hint
}
