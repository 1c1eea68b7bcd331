package trust

import (
	"errors"
	"kbuild.dev/kbuild/index"
	"math/rand"
	"reflect"
	"testing"
	"time"
)

// FuzzParseRoot checks that ParseRoot never panics and that a parsed root
// writes and parses back to the same signed content.
func FuzzParseRoot(f *testing.F) {
	k1, _ := GenerateKey(rand.New(rand.NewSource(1)))
	k2, _ := GenerateKey(rand.New(rand.NewSource(2)))
	r, err := NewRoot(RootConfig{Expires: time.Unix(1807000000, 0), RootKeys: []*PublicKey{k1.Public()}, RootThreshold: 1, IndexKeys: []*PublicKey{k2.Public()}, IndexThreshold: 1,
		Delegations: []DelegationConfig{{Name: "team-virt", Packages: []string{"kubevirt*", "cdi"}, Keys: []*PublicKey{k2.Public()}, Threshold: 1}}})
	if err != nil {
		f.Fatal(err)
	}
	_ = r.Sign(k1)
	b, _ := r.Marshal()
	f.Add(b)
	f.Add([]byte("signed:\n  version: 1\nsignatures: []\n"))
	f.Add([]byte("signed: &a {version: *a}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRoot(data)
		if err != nil {
			return
		}
		d1, err := r.Digest()
		if err != nil {
			t.Fatal(err)
		}
		out, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		r2, err := ParseRoot(out)
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, out)
		}
		if d2, _ := r2.Digest(); d1 != d2 {
			t.Fatalf("root digest changed by a round trip: %s, %s", d1, d2)
		}
	})
}

// FuzzParseSignatures checks that ParseSignatures never panics and that
// parsed signatures write and parse back.
func FuzzParseSignatures(f *testing.F) {
	k, _ := GenerateKey(rand.New(rand.NewSource(1)))
	sigs, _ := Sign([]byte("x"), k)
	one, _ := index.MarshalSignatures(sigs)
	two, _ := index.MarshalSignatures(append(sigs, sigs[0]))
	f.Add(one)
	f.Add(two)
	f.Add([]byte("signatures: []\n"))
	f.Add([]byte("signatures:\n- keyid: &a x\n  sig: *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sigs, err := index.ParseSignatures(data)
		if err != nil {
			return
		}
		out, err := index.MarshalSignatures(sigs)
		if err != nil {
			t.Fatal(err)
		}
		again, err := index.ParseSignatures(out)
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, out)
		}
		if len(sigs) > 1 && !reflect.DeepEqual(sigs, again) || len(sigs) == 1 && again[0].Sig != sigs[0].Sig {
			t.Fatalf("signatures changed by a round trip: %v, %v", sigs, again)
		}
	})
}

// FuzzRootChain feeds a root chain of two fuzzed versions to RootChain,
// after a valid version 1: it never panics, a refusal is a
// *VerificationError, and an accepted root is the version asked for and
// signed by the previous root's keys.
func FuzzRootChain(f *testing.F) {
	k1, _ := GenerateKey(rand.New(rand.NewSource(1)))
	k2, _ := GenerateKey(rand.New(rand.NewSource(2)))
	cfg := RootConfig{Expires: time.Unix(1807000000, 0), RootKeys: []*PublicKey{k1.Public()}, RootThreshold: 1, IndexKeys: []*PublicKey{k2.Public()}, IndexThreshold: 1}
	r1, err := NewRoot(cfg)
	if err != nil {
		f.Fatal(err)
	}
	_ = r1.Sign(k1)
	b1, _ := r1.Marshal()
	r2, _ := r1.Next(cfg)
	_ = r2.Sign(k1)
	b2, _ := r2.Marshal()
	r3, _ := r2.Next(cfg)
	_ = r3.Sign(k1)
	b3, _ := r3.Marshal()
	f.Add(b2, b3)
	f.Add(b3, b2)
	f.Add(b2, []byte("junk"))
	f.Add([]byte("signed: &a {version: *a}\n"), b3)
	trust := &Trust{RootKeys: []*PublicKey{k1.Public()}}
	f.Fuzz(func(t *testing.T, v2, v3 []byte) {
		c := NewRootChain(trust, VerifyOptions{})
		if err := c.Add(b1); err != nil {
			t.Fatalf("valid root 1 refused: %v", err)
		}
		for i, b := range [][]byte{v2, v3} {
			want := c.Next()
			err := c.Add(b)
			if err != nil {
				var ve *VerificationError
				if !errors.As(err, &ve) {
					t.Fatalf("RootChain.Add(version %d) = %v, want a *VerificationError", i+2, err)
				}
				return
			}
			if got := c.Last().Signed.Version; got != want {
				t.Fatalf("RootChain accepted version %d as version %d", got, want)
			}
		}
	})
}
