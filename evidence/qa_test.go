package evidence

import (
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/trust"
)

func TestCheckQASigners(t *testing.T) {
	key := func() *trust.PrivateKey {
		k, err := trust.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	rootKey, idx, qa1, qa2, other := key(), key(), key(), key(), key()
	c := trust.RootConfig{Expires: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), RootKeys: []*trust.PublicKey{rootKey.Public()}, RootThreshold: 1,
		IndexKeys: []*trust.PublicKey{idx.Public()}, IndexThreshold: 1}
	noQA, err := trust.NewRoot(c)
	if err != nil {
		t.Fatal(err)
	}
	c.QAKeys, c.QAThreshold = []*trust.PublicKey{qa1.Public(), qa2.Public()}, 2
	withQA, err := trust.NewRoot(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		root       *trust.Root
		signers    []trust.Signer
		have, need int
		wantErr    string
	}{
		{"one of two", withQA, []trust.Signer{qa1}, 1, 2, ""},
		{"both", withQA, []trust.Signer{qa1, qa2}, 2, 2, ""},
		{"not a qa key", withQA, []trust.Signer{qa1, other}, 0, 0, "key " + other.KeyID() + " is not in the qa role of root root.yaml (version 1)"},
		{"no qa role", noQA, []trust.Signer{qa1}, 0, 0, "root root.yaml (version 1) has no qa role"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have, need, err := CheckQASigners(tc.root, "root.yaml", tc.signers)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("CheckQASigners = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || have != tc.have || need != tc.need {
				t.Fatalf("CheckQASigners = %d, %d, %v; want %d, %d", have, need, err, tc.have, tc.need)
			}
		})
	}
}
