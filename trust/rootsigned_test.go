package trust

import (
	"crypto/rand"
	"strings"
	"testing"
	"time"
)

// TestRootWriteSigned: a note for each signer outside the root keys, and
// the count of signatures.
func TestRootWriteSigned(t *testing.T) {
	rootKey, _ := GenerateKey(rand.Reader)
	other, _ := GenerateKey(rand.Reader)
	r, err := NewRoot(RootConfig{Expires: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), RootKeys: []*PublicKey{rootKey.Public()}, RootThreshold: 1,
		IndexKeys: []*PublicKey{other.Public()}, IndexThreshold: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Sign(rootKey); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		signers []Signer
		notes   []string
	}{
		{"a root key", []Signer{rootKey}, nil},
		{"another key", []Signer{rootKey, other}, []string{"note: key " + other.KeyID() + " is not a root key of version 1; its signature counts only for the previous version's root keys\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			if err := r.WriteSigned(&stdout, &stderr, tc.signers); err != nil {
				t.Fatal(err)
			}
			if got, want := stdout.String(), "root version 1 now has 1 signatures\n"; got != want {
				t.Errorf("stdout = %q, want %q", got, want)
			}
			if got, want := stderr.String(), strings.Join(tc.notes, ""); got != want {
				t.Errorf("stderr = %q, want %q", got, want)
			}
		})
	}
}
