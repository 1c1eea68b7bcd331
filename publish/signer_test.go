package publish

import (
	"crypto/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// kms is a signer that is not a *trust.PrivateKey, as a KMS- or
// HSM-backed one is: it signs through a key it holds and says which
// public key and keyid it signs for.
type kms struct {
	key *trust.PrivateKey
	pub *trust.PublicKey
	id  string
}

func (k *kms) KeyID() string                       { return k.id }
func (k *kms) Public() *trust.PublicKey            { return k.pub }
func (k *kms) Sign(message []byte) ([]byte, error) { return k.key.Sign(message) }

// TestNewChecksInputs: New refuses, with an error and no panic, a signer
// without a public key or whose keyid is not its key's, and a builder
// without a target; a signer that is not a *trust.PrivateKey signs an
// index that verifies with its public key.
func TestNewChecksInputs(t *testing.T) {
	key, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts []Option
		want string
	}{
		{"nil signer", []Option{WithSigners(key, nil)}, "signing key 2 of 2: no signer (nil)"},
		{"no public key", []Option{WithSigners(&kms{key: key, id: key.KeyID()})}, "signing key 1 of 1: signer " + key.KeyID() + " gives no ed25519 public key"},
		{"empty public key", []Option{WithSigners(&kms{key: key, pub: &trust.PublicKey{}, id: key.KeyID()})}, "gives no ed25519 public key"},
		{"keyid not its key's", []Option{WithSigners(&kms{key: key, pub: key.Public(), id: other.KeyID()})},
			"signer says keyid " + other.KeyID() + ", but its public key's keyid is " + key.KeyID()},
		{"builder without a target", []Option{WithBuilder(&builder.Builder{})}, "a builder needs a target to push into"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want an error containing %q", err, tc.want)
			}
		})
	}

	dist, site := t.TempDir(), t.TempDir()
	writeRecord(t, dist, record("kubevirt", "1.9.0", 4, "oci://r/kubevirt", "sha256:"+strings.Repeat("ab", 32)))
	signer := &kms{key: key, pub: key.Public(), id: key.KeyID()}
	p, err := New(WithSigners(signer), WithGenerated(time.Now().Add(-time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Index(t.Context(), dist, filepath.Join(site, sitelayout.IndexFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := siteread.ReadIndex(t.Context(), site, &trust.Trust{IndexKeys: []*trust.PublicKey{key.Public()}}); err != nil {
		t.Fatalf("the index a KMS-like signer signed does not verify with its public key: %v", err)
	}
}
