package trust

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"testing"
)

// split returns data in parts of n bytes.
func split(data []byte, n int) [][]byte {
	var parts [][]byte
	for rest := data; len(rest) > 0; {
		k := min(n, len(rest))
		parts, rest = append(parts, rest[:k]), rest[k:]
	}
	return parts
}

// keyFromSeed returns the key of a 32-byte seed given in hex.
func keyFromSeed(t *testing.T, seedHex string) *PrivateKey {
	t.Helper()
	seed, err := hex.DecodeString(seedHex)
	if err != nil {
		t.Fatal(err)
	}
	k, err := newPrivateKey(ed25519.NewKeyFromSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSignPartsRFC8032 checks the streamed signature against the test
// vectors of RFC 8032 section 7.1 (TEST 1, 2 and 3).
func TestSignPartsRFC8032(t *testing.T) {
	for _, tc := range []struct{ seed, msg, sig string }{
		{"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "",
			"e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"},
		{"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb", "72",
			"92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"},
		{"c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7", "af82",
			"6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"},
	} {
		k := keyFromSeed(t, tc.seed)
		msg, _ := hex.DecodeString(tc.msg)
		sigs, _, err := SignParts(split(msg, 1), k)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := base64.StdEncoding.DecodeString(sigs[0].Sig)
		if hex.EncodeToString(got) != tc.sig {
			t.Errorf("SignParts(%q) = %x, want %s (RFC 8032)", tc.msg, got, tc.sig)
		}
	}
}

// otherSigner is a Signer that is not a *PrivateKey (a KMS, say): it gets
// the message whole.
type otherSigner struct {
	*PrivateKey
	calls int
}

func (o *otherSigner) Sign(message []byte) ([]byte, error) {
	o.calls++
	return o.PrivateKey.Sign(message)
}

// TestSignPartsIsSign checks that SignParts gives what Sign gives for
// the same bytes, with one key or several, whatever the pieces the message
// is written in, and the message's SHA-256.
func TestSignPartsIsSign(t *testing.T) {
	k1 := keyFromSeed(t, "0101010101010101010101010101010101010101010101010101010101010101")
	k2 := keyFromSeed(t, "fefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefe")
	data := make([]byte, 3<<20+17)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	for _, size := range []int{0, 1, 63, 64, 111, 112, 127, 128, 129, 4096, 1 << 20, len(data)} {
		for _, piece := range []int{1, 13, 4096, 1 << 20} {
			if piece == 1 && size > 4096 {
				continue
			}
			msg := data[:size]
			for _, signers := range [][]Signer{{k1}, {k2, k1}, {k1, &otherSigner{PrivateKey: k2}}} {
				t.Run(fmt.Sprintf("%d bytes in %d-byte pieces, %d keys", size, piece, len(signers)), func(t *testing.T) {
					want, err := Sign(msg, signers...)
					if err != nil {
						t.Fatal(err)
					}
					got, sum, err := SignParts(split(msg, piece), signers...)
					if err != nil {
						t.Fatal(err)
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("SignParts = %v, want %v (Sign)", got, want)
					}
					if sum != sha256.Sum256(msg) {
						t.Errorf("SignParts's SHA-256 = %x, want %x", sum, sha256.Sum256(msg))
					}
					for i, s := range got {
						raw, _ := base64.StdEncoding.DecodeString(s.Sig)
						if !signers[i].(interface{ Public() *PublicKey }).Public().Verify(msg, raw) {
							t.Errorf("signature %d does not verify", i)
						}
					}
				})
			}
		}
	}
}

// TestSignPartsNoKey checks that nothing is signed without a key.
func TestSignPartsNoKey(t *testing.T) {
	if sigs, _, err := SignParts(split([]byte("index"), 2)); err == nil || sigs != nil {
		t.Errorf("SignParts without a key = %v, %v; want an error", sigs, err)
	}
}

func BenchmarkSignParts(b *testing.B) {
	k, err := GenerateKey(nil)
	if err != nil {
		b.Fatal(err)
	}
	msg := bytes.Repeat([]byte("    - build: 1\n      digest: sha256:0123456789abcdef\n"), 1<<20/48)
	for _, c := range []struct {
		name string
		sign func() error
	}{
		{"Sign", func() error { _, err := Sign(msg, k); return err }},
		{"SignParts", func() error { _, _, err := SignParts(split(msg, 3468), k); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				if err := c.sign(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSignPartsEmptyParts checks that empty parts, and no parts at all,
// sign as the bytes joined do.
func TestSignPartsEmptyParts(t *testing.T) {
	k := keyFromSeed(t, "0303030303030303030303030303030303030303030303030303030303030303")
	for _, parts := range [][][]byte{nil, {nil}, {[]byte("ab"), nil, {}, []byte("c")}} {
		msg := bytes.Join(parts, nil)
		want, _ := Sign(msg, k)
		got, sum, err := SignParts(parts, k)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) || sum != sha256.Sum256(msg) {
			t.Errorf("SignParts(%q) = %v, %x, %v; want %v, %x", parts, got, sum, err, want, sha256.Sum256(msg))
		}
	}
}
