package keyless

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"google.golang.org/protobuf/encoding/protojson"

	"kbuild.dev/kbuild/sigbundle"
)

// The public Sigstore instances, the defaults of WithFulcio and WithRekor.
const (
	DefaultFulcioURL = "https://fulcio.sigstore.dev"
	DefaultRekorURL  = "https://rekor.sigstore.dev"
)

// GitHubIssuer is the OIDC issuer of GitHub Actions' ID tokens.
const GitHubIssuer = "https://token.actions.githubusercontent.com"

// Identity is sigbundle.Identity: an OIDC issuer and a certificate
// subject.
type Identity = sigbundle.Identity

// Signer signs statements keylessly (a sigbundle.KeylessSigner). It holds one ephemeral key and the
// certificate Fulcio issued for it, asking for a new certificate (with a
// fresh token) only when the one it has is about to expire. Safe for
// concurrent use.
type Signer struct {
	tokens  TokenSource
	fulcio  string
	rekor   string
	trusted root.TrustedMaterial
	// trustedFile is WithTrustedRootFile's, read into trusted by New.
	trustedFile string
	now         func() time.Time

	mu       sync.Mutex
	keypair  *sign.EphemeralKeypair
	id       Identity
	cert     []byte
	notAfter time.Time
}

var _ sigbundle.KeylessSigner = (*Signer)(nil)

// requestTimeout bounds each request to Fulcio and Rekor.
const requestTimeout = 30 * time.Second

// Option configures a Signer.
type Option func(*Signer)

// WithFulcio sets the Fulcio instance's base URL (default
// DefaultFulcioURL).
func WithFulcio(url string) Option {
	return func(s *Signer) { s.fulcio = strings.TrimSuffix(url, "/") }
}

// WithRekor sets the Rekor instance's base URL (default DefaultRekorURL).
func WithRekor(url string) Option {
	return func(s *Signer) { s.rekor = strings.TrimSuffix(url, "/") }
}

// WithTrustedRootFile makes Sign verify every bundle it makes, as Verify
// does (certificate chain, log entry, integrated time, and the
// certificate transparency of the certificate when the root names a CT
// log), against the Sigstore trusted root New reads from file
// (trusted_root.json, ParseTrustedRoot) and the identity it signs for,
// before returning it: a private Sigstore's trusted root (kbuild build
// and publish --trusted-root). "" (the default) is no check; the
// instances are trusted as they answer.
func WithTrustedRootFile(file string) Option { return func(s *Signer) { s.trustedFile = file } }

// New returns a Signer that gets its OIDC tokens from tokens. It takes
// the first token at once, so that a missing or malformed token is an
// error here, and reads the identity it will sign for from the token's
// claims (Identity).
func New(ctx context.Context, tokens TokenSource, opts ...Option) (*Signer, error) {
	s := &Signer{tokens: tokens, fulcio: DefaultFulcioURL, rekor: DefaultRekorURL, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	if tokens == nil {
		return nil, errors.New("keyless: no token source")
	}
	if s.trustedFile != "" {
		data, err := os.ReadFile(s.trustedFile)
		if err != nil {
			return nil, fmt.Errorf("keyless: %w", err)
		}
		if s.trusted, err = ParseTrustedRoot(data); err != nil {
			return nil, fmt.Errorf("keyless: %s: %w", s.trustedFile, err)
		}
	}
	tok, err := tokens(ctx)
	if err != nil {
		return nil, err
	}
	if s.id, err = TokenIdentity(tok); err != nil {
		return nil, err
	}
	if s.keypair, err = sign.NewEphemeralKeypair(nil); err != nil {
		return nil, fmt.Errorf("keyless: ephemeral key: %w", err)
	}
	return s, nil
}

// Identity is what s signs for: the issuer and subject of the certificate
// Fulcio issued, or before the first Sign, what the token's claims say
// Fulcio will certify.
func (s *Signer) Identity() Identity {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Sign returns the v0.3 Sigstore bundle (protobuf JSON) of st: a DSSE
// envelope of the in-toto statement signed with the ephemeral key, the
// Fulcio certificate of that key and the Rekor entry of the signature,
// with its inclusion proof.
func (s *Signer) Sign(ctx context.Context, st *sigbundle.Statement) ([]byte, error) {
	payload, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	b, err := sign.Bundle(&sign.DSSEData{Data: payload, PayloadType: sigbundle.InTotoPayloadType}, s.keypair, sign.BundleOptions{
		CertificateProvider:        (*cachedCert)(s),
		CertificateProviderOptions: &sign.CertificateProviderOptions{},
		TransparencyLogs:           []sign.Transparency{sign.NewRekor(&sign.RekorOptions{BaseURL: s.rekor, Timeout: requestTimeout})},
		Context:                    ctx,
	})
	if err != nil {
		return nil, fmt.Errorf("keyless signature of the %s statement (Fulcio %s, Rekor %s): %w", st.PredicateType, s.fulcio, s.rekor, err)
	}
	data, err := protojson.Marshal(b)
	if err != nil || s.trusted == nil {
		return data, err
	}
	if len(st.Subject) == 0 || st.Subject[0].Digest["sha256"] == "" {
		return nil, fmt.Errorf("keyless signature of the %s statement: it names no sha256 subject to verify it for", st.PredicateType)
	}
	if _, err := Verify(data, "sha256:"+st.Subject[0].Digest["sha256"], VerifyOptions{TrustedRoot: s.trusted, Identity: s.Identity(), IgnoreSCT: len(s.trusted.CTLogs()) == 0}); err != nil {
		return nil, fmt.Errorf("keyless signature of the %s statement (Fulcio %s, Rekor %s) does not verify against the trusted root: %w; is the trusted root these instances'?", st.PredicateType, s.fulcio, s.rekor, err)
	}
	return data, nil
}

// cachedCert is the CertificateProvider of a Signer: Fulcio's certificate
// for the Signer's key, kept until a minute before it expires.
type cachedCert Signer

func (c *cachedCert) GetCertificate(ctx context.Context, kp sign.Keypair, _ *sign.CertificateProviderOptions) ([]byte, error) {
	s := (*Signer)(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cert != nil && s.now().Add(time.Minute).Before(s.notAfter) {
		return s.cert, nil
	}
	tok, err := s.tokens(ctx)
	if err != nil {
		return nil, err
	}
	der, err := sign.NewFulcio(&sign.FulcioOptions{BaseURL: s.fulcio, Timeout: requestTimeout}).GetCertificate(ctx, kp, &sign.CertificateProviderOptions{IDToken: tok})
	if err != nil {
		return nil, fmt.Errorf("certificate from Fulcio %s: %w", s.fulcio, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("certificate from Fulcio %s: %w", s.fulcio, err)
	}
	id, err := CertificateIdentity(cert)
	if err != nil {
		return nil, fmt.Errorf("certificate from Fulcio %s: %w", s.fulcio, err)
	}
	s.cert, s.notAfter, s.id = der, cert.NotAfter, id
	return der, nil
}

// TokenIdentity is the identity Fulcio certifies for the OIDC token tok,
// read from its claims without verifying them (Fulcio does): for GitHub
// Actions' tokens, https://github.com/ + job_workflow_ref; else the
// email claim, or the subject.
func TokenIdentity(tok string) (Identity, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return Identity{}, fmt.Errorf("OIDC token: %d dot-separated parts, want 3 (a JWT)", len(parts))
	}
	data, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return Identity{}, fmt.Errorf("OIDC token: claims are not base64url: %w", err)
	}
	var c struct {
		Issuer      string `json:"iss"`
		Subject     string `json:"sub"`
		Email       string `json:"email"`
		WorkflowRef string `json:"job_workflow_ref"`
		Repository  string `json:"repository"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return Identity{}, fmt.Errorf("OIDC token: claims: %w", err)
	}
	id := Identity{Issuer: c.Issuer, Subject: c.Subject}
	switch {
	case c.WorkflowRef != "":
		id.Subject, id.Repository = "https://github.com/"+c.WorkflowRef, c.Repository
	case c.Email != "":
		id.Subject = c.Email
	}
	if err := id.Validate(); err != nil {
		return Identity{}, fmt.Errorf("OIDC token: %w", err)
	}
	return id, nil
}
