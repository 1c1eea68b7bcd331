package publish

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// TestRepoIndexOrder: RepoIndex refuses an expiry already past before it
// reads the base or writes anything, then verifies the base before it
// writes; what it writes verifies with the signing key.
func TestRepoIndexOrder(t *testing.T) {
	key, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	dist := t.TempDir()
	writeRecord(t, dist, record("kubevirt", "1.9.0", 4, "oci://r/kubevirt", "sha256:"+strings.Repeat("ab", 32)))
	now := time.Now().UTC().Truncate(time.Second)
	strangerSite := t.TempDir()
	if _, out, err := indexInto(t, dist, strangerSite, stranger, now.Add(-time.Hour)); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	trusted := &trust.Trust{IndexKeys: []*trust.PublicKey{key.Public()}}
	for _, tc := range []struct {
		name      string
		generated time.Time
		merge     string
		want      string
	}{
		{"expiry past, before the base", now.AddDate(0, -2, 0), filepath.Join(strangerSite, sitelayout.IndexFile), "which is past (generated"},
		{"base refused, nothing written", now.Add(-time.Hour), filepath.Join(strangerSite, sitelayout.IndexFile), "index is not signed by a trusted key"},
		{"written", now.Add(-time.Hour), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := t.TempDir()
			var out bytes.Buffer
			a := &RepoIndex{Dist: dist, Out: filepath.Join(site, sitelayout.IndexFile), Signers: []trust.Signer{key}, Merge: tc.merge, MergeTrust: trusted,
				Generated: tc.generated, Expires: 30 * 24 * time.Hour, Now: now, Stdout: &out, Stderr: &out}
			res, err := a.Run(t.Context())
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Run = %v, want an error containing %q", err, tc.want)
				}
				var past *PastExpiryError
				if errors.As(err, &past) != strings.HasPrefix(tc.name, "expiry") {
					t.Errorf("Run = %v (%T): a past expiry is a *PastExpiryError, nothing else is", err, err)
				}
				if _, err := os.Stat(filepath.Join(site, sitelayout.IndexFile)); err == nil {
					t.Errorf("%s written by a refused RepoIndex", sitelayout.IndexFile)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if res.Index.Packages != 1 || res.Index.Versions != 1 {
				t.Errorf("Run wrote %d packages, %d versions; want 1, 1", res.Index.Packages, res.Index.Versions)
			}
			if _, err := siteread.ReadIndex(t.Context(), site, trusted); err != nil {
				t.Errorf("the index written does not verify with its key: %v", err)
			}
		})
	}
}
