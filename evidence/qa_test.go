package evidence

import (
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
)

func TestCheckQASigners(t *testing.T) {
	key := func() *index.PrivateKey {
		k, err := index.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	rootKey, idx, qa1, qa2, other := key(), key(), key(), key(), key()
	c := index.RootConfig{Expires: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), RootKeys: []*index.PublicKey{rootKey.Public()}, RootThreshold: 1,
		IndexKeys: []*index.PublicKey{idx.Public()}, IndexThreshold: 1}
	noQA, err := index.NewRoot(c)
	if err != nil {
		t.Fatal(err)
	}
	c.QAKeys, c.QAThreshold = []*index.PublicKey{qa1.Public(), qa2.Public()}, 2
	withQA, err := index.NewRoot(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		root       *index.Root
		signers    []index.Signer
		have, need int
		wantErr    string
	}{
		{"one of two", withQA, []index.Signer{qa1}, 1, 2, ""},
		{"both", withQA, []index.Signer{qa1, qa2}, 2, 2, ""},
		{"not a qa key", withQA, []index.Signer{qa1, other}, 0, 0, "key " + other.KeyID() + " is not in the qa role of root root.yaml (version 1)"},
		{"no qa role", noQA, []index.Signer{qa1}, 0, 0, "root root.yaml (version 1) has no qa role"},
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
