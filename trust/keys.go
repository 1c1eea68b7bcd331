package trust

import (
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
)

// PEM block types of key files.
const (
	privateKeyPEMType = "PRIVATE KEY" // PKCS #8
	publicKeyPEMType  = "PUBLIC KEY"  // PKIX
)

// Signer signs bytes with a key whose public half is identified by KeyID.
// Index, root and package-version signatures are made through it, so keys
// may live anywhere (a file, an environment variable, a KMS).
type Signer interface {
	// KeyID returns the hex sha256 of the signing key's PKIX public key.
	KeyID() string
	// Public returns the public half of the signing key, which the site
	// publishes and verifiers pin.
	Public() *PublicKey
	// Sign returns the signature of message.
	Sign(message []byte) ([]byte, error)
}

// KeyIDs returns the KeyID of each of signers, in order.
func KeyIDs(signers []Signer) []string {
	ids := make([]string, len(signers))
	for i, s := range signers {
		ids[i] = s.KeyID()
	}
	return ids
}

// CheckSigner returns an error unless s can sign for an index: it is not
// nil, its Public returns a whole ed25519 key, and its KeyID is that
// key's. Whoever takes a Signer from outside (a KMS, an HSM) checks it
// once with this, so nothing later dereferences a missing key.
func CheckSigner(s Signer) error {
	if s == nil {
		return errors.New("no signer (nil)")
	}
	pub := s.Public()
	if pub == nil || len(pub.key) != ed25519.PublicKeySize {
		return fmt.Errorf("signer %s gives no ed25519 public key", s.KeyID())
	}
	if s.KeyID() != pub.id {
		return fmt.Errorf("signer says keyid %s, but its public key's keyid is %s", s.KeyID(), pub.id)
	}
	return nil
}

// Verifier checks signatures made by one key.
type Verifier interface {
	// KeyID returns the hex sha256 of the key's PKIX public key.
	KeyID() string
	// Verify reports whether sig is a valid signature of message.
	Verify(message, sig []byte) bool
}

var (
	_ Signer   = (*PrivateKey)(nil)
	_ Verifier = (*PublicKey)(nil)
)

// PublicKey is an ed25519 public key and its keyid.
type PublicKey struct {
	key ed25519.PublicKey
	der []byte
	id  string
}

// NewPublicKey returns k as a PublicKey.
func NewPublicKey(k ed25519.PublicKey) (*PublicKey, error) {
	if len(k) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("ed25519 public key is %d bytes, want %d", len(k), ed25519.PublicKeySize)
	}
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		return nil, err
	}
	return &PublicKey{key: k, der: der, id: KeyID(der)}, nil
}

// KeyID returns the keyid of a public key given as PKIX DER: the hex sha256
// of the DER bytes.
func KeyID(pkixDER []byte) string {
	sum := sha256.Sum256(pkixDER)
	return hex.EncodeToString(sum[:])
}

// ParsePublicKey parses a PEM "PUBLIC KEY" block (PKIX) holding an ed25519
// key, as written to PREFIX.pub.
func ParsePublicKey(pemBytes []byte) (*PublicKey, error) {
	block, err := onePEM(pemBytes, publicKeyPEMType)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	ek, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("public key is %T, want ed25519: %w", k, ErrKeyFormat)
	}
	return NewPublicKey(ek)
}

// KeyID returns the key's keyid.
func (k *PublicKey) KeyID() string { return k.id }

// Key returns the ed25519 key.
func (k *PublicKey) Key() ed25519.PublicKey { return k.key }

// Verify reports whether sig is k's ed25519 signature of message.
func (k *PublicKey) Verify(message, sig []byte) bool {
	return len(sig) == ed25519.SignatureSize && ed25519.Verify(k.key, message, sig)
}

// PEM returns the key as a PEM "PUBLIC KEY" block.
func (k *PublicKey) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: publicKeyPEMType, Bytes: k.der})
}

// String returns "ed25519 public key KEYID".
func (k *PublicKey) String() string { return "ed25519 public key " + k.id }

// PrivateKey is an ed25519 private key. Its String and GoString methods
// print only the keyid, so that a key never reaches a log by accident.
type PrivateKey struct {
	key ed25519.PrivateKey
	pub *PublicKey
}

// GenerateKey returns a new ed25519 key read from rand (crypto/rand.Reader
// when nil).
func GenerateKey(rand io.Reader) (*PrivateKey, error) {
	_, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return nil, err
	}
	return newPrivateKey(priv)
}

func newPrivateKey(priv ed25519.PrivateKey) (*PrivateKey, error) {
	pub, err := NewPublicKey(priv.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	return &PrivateKey{key: priv, pub: pub}, nil
}

// ParsePrivateKey parses a PEM "PRIVATE KEY" block (PKCS #8) holding an
// ed25519 key, as written to PREFIX.key. Errors never quote the input.
func ParsePrivateKey(pemBytes []byte) (*PrivateKey, error) {
	block, err := onePEM(pemBytes, privateKeyPEMType)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("private key: not a valid PKCS #8 key")
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("private key is %T, want ed25519: %w", k, ErrKeyFormat)
	}
	return newPrivateKey(ek)
}

// MarshalPEM returns the key as a PEM "PRIVATE KEY" block (PKCS #8). Write
// it to a file of mode 0600.
func (k *PrivateKey) MarshalPEM() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k.key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: privateKeyPEMType, Bytes: der}), nil
}

// Public returns the public half of k.
func (k *PrivateKey) Public() *PublicKey { return k.pub }

// KeyID returns the keyid of k's public key.
func (k *PrivateKey) KeyID() string { return k.pub.id }

// Sign returns k's ed25519 signature of message.
func (k *PrivateKey) Sign(message []byte) ([]byte, error) {
	return k.key.Sign(nil, message, crypto.Hash(0))
}

// String returns "ed25519 private key KEYID", never the key.
func (k *PrivateKey) String() string { return "ed25519 private key " + k.pub.id }

// GoString is String, so that %#v does not print the key either.
func (k *PrivateKey) GoString() string { return k.String() }

// Format prints String for every verb (%x and %+v included).
func (k *PrivateKey) Format(f fmt.State, verb rune) { io.WriteString(f, k.String()) }

// ErrKeyFormat is wrapped by the errors of reading a key that is not
// kbuild's kind (PEM, ed25519, as WriteKeyPair writes): make keys with
// GenerateKey and WriteKeyPair.
var ErrKeyFormat = errors.New("not an ed25519 key in PEM, the kind kbuild makes")

// onePEM decodes the single PEM block of type typ in b.
func onePEM(b []byte, typ string) (*pem.Block, error) {
	block, rest := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("no PEM %q block found: %w", typ, ErrKeyFormat)
	}
	if block.Type != typ {
		return nil, fmt.Errorf("PEM block is %q, want %q", block.Type, typ)
	}
	for _, c := range rest {
		if c != '\n' && c != '\r' && c != ' ' && c != '\t' {
			return nil, fmt.Errorf("data after the PEM %q block", typ)
		}
	}
	return block, nil
}
