package index_test

import (
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/trust"
	"math/rand"
	"testing"
)

// keys are deterministic test keys.
type testKeys struct {
	index, index2, rootA, rootB, rootC, team, stranger *trust.PrivateKey
}

func newTestKeys(t testing.TB) *testKeys {
	rng := rand.New(rand.NewSource(42))
	k := func() *trust.PrivateKey {
		key, err := trust.GenerateKey(rng)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	return &testKeys{index: k(), index2: k(), rootA: k(), rootB: k(), rootC: k(), team: k(), stranger: k()}
}

func pubs(ks ...*trust.PrivateKey) []*trust.PublicKey {
	out := make([]*trust.PublicKey, len(ks))
	for i, k := range ks {
		out[i] = k.Public()
	}
	return out
}

// signed returns x's bytes and a signature file by keys.
func signed(t testing.TB, x *index.RepositoryIndex, keys ...*trust.PrivateKey) ([]byte, []byte) {
	t.Helper()
	data, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return data, sigFile(t, data, keys...)
}

func sigFile(t testing.TB, data []byte, keys ...*trust.PrivateKey) []byte {
	t.Helper()
	b, err := index.MarshalSignatures(signAll(t, data, keys))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func signAll(t testing.TB, data []byte, keys []*trust.PrivateKey) []index.Signature {
	t.Helper()
	var signers []trust.Signer
	for _, k := range keys {
		signers = append(signers, k)
	}
	sigs, err := trust.Sign(data, signers...)
	if err != nil {
		t.Fatal(err)
	}
	return sigs
}
