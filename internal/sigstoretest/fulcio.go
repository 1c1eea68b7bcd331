package sigstoretest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"crypto/x509/pkix"
)

// Fulcio's certificate extensions (OID 1.3.6.1.4.1.57264.1.N): the
// deprecated raw-string ones cosign's --certificate-github-workflow-*
// flags read, and the DER-encoded ones of the current profile.
var (
	oidIssuer             = fulcioOID(1)
	oidWorkflowTrigger    = fulcioOID(2)
	oidWorkflowSHA        = fulcioOID(3)
	oidWorkflowName       = fulcioOID(4)
	oidWorkflowRepository = fulcioOID(5)
	oidWorkflowRef        = fulcioOID(6)
	oidIssuerV2           = fulcioOID(8)
	oidBuildSignerURI     = fulcioOID(9)
	oidSourceRepoURI      = fulcioOID(12)
	oidSourceRepoRef      = fulcioOID(14)
)

func fulcioOID(n int) asn1.ObjectIdentifier {
	return asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, n}
}

// tokenClaims are the verified claims Fulcio reads.
type tokenClaims struct {
	Issuer   string          `json:"iss"`
	Subject  string          `json:"sub"`
	Audience json.RawMessage `json:"aud"`
	Expires  int64           `json:"exp"`
	NotBef   int64           `json:"nbf"`
	GitHubClaims
}

// signingCert is Fulcio's POST /api/v2/signingCert: the bearer token
// verified against its issuer's keys (fetched over HTTP from the
// issuer's discovery document, as Fulcio does), the proof of possession
// (the key's signature of the token's subject) checked, and a
// ten-minute code-signing certificate for the key issued, whose subject
// alternative name is the workflow that ran the job.
func (s *Sigstore) signingCert(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/v2/signingCert" {
		httpError(w, http.StatusNotFound, "no such endpoint %s %s", r.Method, r.URL.Path)
		return
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		httpError(w, http.StatusUnauthorized, "no bearer token")
		return
	}
	c, err := s.verifyToken(r, tok)
	if err != nil {
		httpError(w, http.StatusUnauthorized, "the identity token does not verify: %v", err)
		return
	}
	var req struct {
		PublicKeyRequest struct {
			PublicKey struct {
				Content string `json:"content"`
			} `json:"publicKey"`
			ProofOfPossession string `json:"proofOfPossession"`
		} `json:"publicKeyRequest"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		httpError(w, http.StatusBadRequest, "request: %v", err)
		return
	}
	block, _ := pem.Decode([]byte(req.PublicKeyRequest.PublicKey.Content))
	if block == nil {
		httpError(w, http.StatusBadRequest, "public key is not PEM")
		return
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		httpError(w, http.StatusBadRequest, "public key: %v", err)
		return
	}
	ec, ok := pub.(*ecdsa.PublicKey)
	if !ok || ec.Curve != elliptic.P256() {
		httpError(w, http.StatusBadRequest, "public key is %T, this Fulcio takes ECDSA P-256", pub)
		return
	}
	proof, err := base64.StdEncoding.DecodeString(req.PublicKeyRequest.ProofOfPossession)
	sum := sha256.Sum256([]byte(c.Subject))
	if err != nil || !ecdsa.VerifyASN1(ec, sum[:], proof) {
		httpError(w, http.StatusBadRequest, "the proof of possession is not the key's signature of the token's subject %q", c.Subject)
		return
	}
	der, err := s.issue(ec, c)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s.mu.Lock()
	s.Certificates++
	s.mu.Unlock()
	chain := []string{
		string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.caCert.Raw})),
	}
	writeJSON(w, http.StatusOK, map[string]any{"signedCertificateDetachedSct": map[string]any{"chain": map[string]any{"certificates": chain}}})
}

// verifyToken checks tok as Fulcio checks an ID token of a configured
// issuer: the issuer is this Sigstore's, the ES256 signature is by a key
// of the issuer's JWKS, the audience is sigstore and the token is
// current; a GitHub-Actions-shaped token must name the workflow.
func (s *Sigstore) verifyToken(r *http.Request, tok string) (*tokenClaims, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, errors.New("not a JWT")
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	var c tokenClaims
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	if c.Issuer != s.IssuerURL {
		return nil, fmt.Errorf("issuer %q is not one this Fulcio trusts (%s)", c.Issuer, s.IssuerURL)
	}
	key, err := issuerKey(r, c.Issuer)
	if err != nil {
		return nil, err
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return nil, errors.New("signature is not an ES256 signature")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(key, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return nil, errors.New("signature is not the issuer's")
	}
	var aud []string
	if json.Unmarshal(c.Audience, &aud) != nil {
		var one string
		_ = json.Unmarshal(c.Audience, &one)
		aud = []string{one}
	}
	if !slices.Contains(aud, "sigstore") {
		return nil, fmt.Errorf("audience %s is not sigstore", c.Audience)
	}
	now := time.Now().Unix()
	if now >= c.Expires || now < c.NotBef {
		return nil, errors.New("token is not current")
	}
	if c.Subject == "" || c.WorkflowRef == "" || c.Repository == "" {
		return nil, errors.New("token lacks sub, repository or job_workflow_ref")
	}
	return &c, nil
}

// issuerKey fetches the issuer's discovery document and its JWKS and
// returns its (one) P-256 key.
func issuerKey(r *http.Request, issuer string) (*ecdsa.PublicKey, error) {
	var disc struct {
		JWKS string `json:"jwks_uri"`
	}
	if err := getJSON(r, issuer+"/.well-known/openid-configuration", &disc); err != nil {
		return nil, err
	}
	if u, err := url.Parse(disc.JWKS); err != nil || !strings.HasPrefix(disc.JWKS, issuer+"/") {
		return nil, fmt.Errorf("jwks_uri %q is not under the issuer %s (%v)", disc.JWKS, issuer, u)
	}
	var set struct {
		Keys []struct {
			Kty, Crv, X, Y string
		} `json:"keys"`
	}
	if err := getJSON(r, disc.JWKS, &set); err != nil {
		return nil, err
	}
	for _, k := range set.Keys {
		if k.Kty != "EC" || k.Crv != "P-256" {
			continue
		}
		x, errX := base64.RawURLEncoding.DecodeString(k.X)
		y, errY := base64.RawURLEncoding.DecodeString(k.Y)
		if errX != nil || errY != nil {
			continue
		}
		if len(x) != 32 || len(y) != 32 {
			continue
		}
		return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	}
	return nil, errors.New("the issuer publishes no P-256 key")
}

func getJSON(r *http.Request, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx(r), http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}

// issue signs the leaf certificate of pub for the claims c.
func (s *Sigstore) issue(pub *ecdsa.PublicKey, c *tokenClaims) ([]byte, error) {
	san, err := url.Parse(c.GitHubClaims.Subject())
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	utf8 := func(v string) []byte {
		b, err := asn1.MarshalWithParams(v, "utf8")
		if err != nil {
			panic(err)
		}
		return b
	}
	now := time.Now().Truncate(time.Second)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(10 * time.Minute),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
		URIs:         []*url.URL{san},
		ExtraExtensions: []pkix.Extension{
			{Id: oidIssuer, Value: []byte(c.Issuer)},
			{Id: oidWorkflowTrigger, Value: []byte(c.EventName)},
			{Id: oidWorkflowSHA, Value: []byte(c.SHA)},
			{Id: oidWorkflowName, Value: []byte(c.Workflow)},
			{Id: oidWorkflowRepository, Value: []byte(c.Repository)},
			{Id: oidWorkflowRef, Value: []byte(c.Ref)},
			{Id: oidIssuerV2, Value: utf8(c.Issuer)},
			{Id: oidBuildSignerURI, Value: utf8(san.String())},
			{Id: oidSourceRepoURI, Value: utf8("https://github.com/" + c.Repository)},
			{Id: oidSourceRepoRef, Value: utf8(c.Ref)},
		},
	}
	return x509.CreateCertificate(rand.Reader, tmpl, s.caCert, pub, s.caKey)
}
