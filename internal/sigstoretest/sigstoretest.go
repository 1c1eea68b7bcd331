// Package sigstoretest runs a Sigstore on loopback for tests of keyless
// signing: an OIDC issuer minting GitHub-Actions-shaped ID tokens, a
// Fulcio (its v2 signingCert API) that checks such a token against the
// issuer's published keys and the proof of possession, and certifies the
// key for the token's identity with GitHub's certificate extensions, and
// a Rekor (its v1 log-entries API) that canonicalizes entries with
// Rekor's own entry types, appends them to an RFC 6962 Merkle tree and
// answers with a signed entry timestamp and an inclusion proof under a
// signed checkpoint. Each is a real HTTP server that sigstore-go's
// clients and the cosign CLI talk to; their keys are generated per
// Sigstore and named in TrustedRoot, the trusted_root.json that cosign
// verify --trusted-root reads.
//
// The CA issues no certificate-transparency SCTs: verifiers are told so
// (cosign's --insecure-ignore-sct, keyless.VerifyOptions.IgnoreSCT). The
// log's integrated time is the timestamp verifiers use; there is no TSA.
package sigstoretest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Sigstore is a loopback OIDC issuer, Fulcio and Rekor with their keys.
type Sigstore struct {
	// IssuerURL, FulcioURL and RekorURL are the servers' base URLs.
	IssuerURL, FulcioURL, RekorURL string

	t         testing.TB
	oidcKey   *ecdsa.PrivateKey
	caKey     *ecdsa.PrivateKey
	caCert    *x509.Certificate
	logKey    *ecdsa.PrivateKey
	logSigner signature.SignerVerifier
	start     time.Time

	mu  sync.Mutex
	log *merkleLog
	// Requests counts the certificates Fulcio issued and the entries Rekor
	// logged.
	Certificates, Entries int
}

// New starts the three servers, stopped when t ends.
func New(t testing.TB) *Sigstore {
	t.Helper()
	s := &Sigstore{t: t, start: time.Now().Add(-time.Hour).Truncate(time.Second), log: newMerkleLog()}
	var err error
	for _, k := range []**ecdsa.PrivateKey{&s.oidcKey, &s.caKey, &s.logKey} {
		if *k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			t.Fatal(err)
		}
	}
	if s.logSigner, err = signature.LoadECDSASignerVerifier(s.logKey, crypto.SHA256); err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kbuild test Fulcio", Organization: []string{"kbuild.dev"}},
		NotBefore:             s.start,
		NotAfter:              s.start.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, s.caKey.Public(), s.caKey)
	if err != nil {
		t.Fatal(err)
	}
	if s.caCert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	s.IssuerURL = serve(t, s.issuerHandler())
	s.FulcioURL = serve(t, http.HandlerFunc(s.signingCert))
	s.RekorURL = serve(t, http.HandlerFunc(s.createEntry))
	return s
}

func serve(t testing.TB, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// GitHubClaims are the claims of a GitHub Actions ID token that Fulcio
// reads: the repository, the ref, the workflow that ran the job
// (job_workflow_ref) and the commit.
type GitHubClaims struct {
	Repository  string `json:"repository"`
	Ref         string `json:"ref"`
	WorkflowRef string `json:"job_workflow_ref"`
	SHA         string `json:"sha"`
	EventName   string `json:"event_name"`
	Workflow    string `json:"workflow"`
}

// Workflow returns the claims of a job of repo (ORG/REPO) run by its
// workflow file wf (publish.yml) on refs/heads/main.
func Workflow(repo, wf string) GitHubClaims {
	return GitHubClaims{
		Repository:  repo,
		Ref:         "refs/heads/main",
		WorkflowRef: repo + "/.github/workflows/" + wf + "@refs/heads/main",
		SHA:         "0123456789abcdef0123456789abcdef01234567",
		EventName:   "push",
		Workflow:    wf,
	}
}

// Subject is the certificate subject Fulcio gives a token with claims c:
// https://github.com/ + job_workflow_ref.
func (c GitHubClaims) Subject() string { return "https://github.com/" + c.WorkflowRef }

// Token mints an ID token of the issuer for the audience sigstore with
// claims c, valid for ten minutes.
func (s *Sigstore) Token(c GitHubClaims) string {
	return s.TokenFor(s.IssuerURL, "sigstore", c)
}

// TokenFor mints a token as Token does with another issuer claim and
// audience (signed by the same key): what a forged or misdirected token
// looks like.
func (s *Sigstore) TokenFor(iss, aud string, c GitHubClaims) string {
	now := time.Now()
	claims := map[string]any{
		"iss": iss, "aud": aud, "sub": "repo:" + c.Repository + ":ref:" + c.Ref,
		"iat": now.Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(10 * time.Minute).Unix(),
		"repository": c.Repository, "ref": c.Ref, "job_workflow_ref": c.WorkflowRef,
		"sha": c.SHA, "event_name": c.EventName, "workflow": c.Workflow,
	}
	return s.jwt(claims)
}

// TrustedRoot writes trusted_root.json into dir, naming the CA and the
// log key (no CT log, no TSA), and returns its path.
func (s *Sigstore) TrustedRoot(dir string) string {
	s.t.Helper()
	tr, err := s.Material()
	if err != nil {
		s.t.Fatal(err)
	}
	data, err := json.MarshalIndent(tr, "", "  ")
	if err != nil {
		s.t.Fatal(err)
	}
	p := filepath.Join(dir, "trusted_root.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// Material is the trusted root as sigstore-go's verifier takes it.
func (s *Sigstore) Material() (*root.TrustedRoot, error) {
	ca := &root.FulcioCertificateAuthority{Root: s.caCert, ValidityPeriodStart: s.start, URI: s.FulcioURL}
	id := s.logID()
	logs := map[string]*root.TransparencyLog{hex.EncodeToString(id): {
		BaseURL:             s.RekorURL,
		ID:                  id,
		ValidityPeriodStart: s.start,
		HashFunc:            crypto.SHA256,
		PublicKey:           s.logKey.Public(),
		SignatureHashFunc:   crypto.SHA256,
	}}
	return root.NewTrustedRoot(root.TrustedRootMediaType01, []root.CertificateAuthority{ca}, nil, nil, logs)
}

// logID is the log's ID: the SHA-256 of its DER public key.
func (s *Sigstore) logID() []byte {
	der, err := x509.MarshalPKIXPublicKey(s.logKey.Public())
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(der)
	return sum[:]
}

// jwt signs claims as an ES256 JWT with the issuer's key.
func (s *Sigstore) jwt(claims map[string]any) string {
	head, _ := json.Marshal(map[string]string{"alg": "ES256", "typ": "JWT", "kid": "test"})
	body, err := json.Marshal(claims)
	if err != nil {
		panic(err)
	}
	in := base64.RawURLEncoding.EncodeToString(head) + "." + base64.RawURLEncoding.EncodeToString(body)
	sum := sha256.Sum256([]byte(in))
	r, ss, err := ecdsa.Sign(rand.Reader, s.oidcKey, sum[:])
	if err != nil {
		panic(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	ss.FillBytes(sig[32:])
	return in + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// issuerHandler serves the issuer's OpenID discovery document and its
// JSON Web Key Set, where Fulcio finds the key that signs tokens.
func (s *Sigstore) issuerHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"issuer": s.IssuerURL, "jwks_uri": s.IssuerURL + "/jwks", "id_token_signing_alg_values_supported": []string{"ES256"}})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		raw, err := s.oidcKey.PublicKey.Bytes() // 0x04 || X || Y
		if err != nil {
			httpError(w, http.StatusInternalServerError, "%v", err)
			return
		}
		x, y := raw[1:33], raw[33:]
		writeJSON(w, http.StatusOK, map[string]any{"keys": []map[string]string{{
			"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": "test",
			"x": base64.RawURLEncoding.EncodeToString(x), "y": base64.RawURLEncoding.EncodeToString(y),
		}}})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func httpError(w http.ResponseWriter, code int, format string, args ...any) {
	writeJSON(w, code, map[string]any{"code": code, "message": fmt.Sprintf(format, args...)})
}

// ctx is a context for the servers' own calls (fetching the issuer's keys).
func ctx(r *http.Request) context.Context { return r.Context() }
