package publish

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// verifySite verifies the index of site as kbuild repo verify does (each
// package checked as it is read and dropped) and returns what it found.
func verifySite(t *testing.T, site string, tr *trust.Trust) *trust.Verified {
	t.Helper()
	s, err := siteread.Open(filepath.Join(site, sitelayout.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Verify(context.Background(), tr, trust.VerifyOptions{Now: time.Now(), DiscardIndex: true})
	if err != nil {
		t.Fatalf("verify %s: %v", site, err)
	}
	return v
}

// TestMergeKubepkgIndex verifies an index written by kubepkg
// (testdata/kubepkg-index.yaml: a version without build, a v1.8.0
// version, a component with path, verbs: null, and the fields mirror and
// keywords of a newer kubepkg) and indexes a new build over it: every
// version kubepkg published is kept, unknown fields are named in warnings
// and not written, and the merged index verifies.
func TestMergeKubepkgIndex(t *testing.T) {
	work := t.TempDir()
	key, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tr := &trust.Trust{IndexKeys: []*trust.PublicKey{key.Public()}}
	data, err := os.ReadFile(filepath.Join("testdata", "kubepkg-index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := trust.Sign(data, key)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := index.MarshalSignatures(sigs)
	if err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(work, "site")
	if err := os.MkdirAll(site, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(site, sitelayout.IndexFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(site, sitelayout.SignatureFile), sig, 0o644); err != nil {
		t.Fatal(err)
	}

	v := verifySite(t, site, tr)
	warnings := strings.Join(v.Warnings, "\n")
	if v.Packages != 2 || v.Versions != 4 || !strings.Contains(warnings, "field keywords is not known to kbuild; ignored") ||
		!strings.Contains(warnings, "index.yaml: field mirror is not known") {
		t.Fatalf("verify of kubepkg's index: %d packages, %d versions, warnings:\n%s\nwant 2 packages, 4 versions and warnings naming keywords and mirror", v.Packages, v.Versions, warnings)
	}
	distDir := filepath.Join(work, "dist")
	sum := sha256.Sum256([]byte("new"))
	writeRecord(t, distDir, record("kubevirt", "1.10.0", 1, "oci://ghcr.io/example/charts", "sha256:"+hex.EncodeToString(sum[:])))
	out := filepath.Join(work, "out")
	res, printed, err := indexInto(t, distDir, out, key, time.Now().UTC().Truncate(time.Second), WithMerge(filepath.Join(site, sitelayout.IndexFile), tr, false))
	if err != nil || res.Packages != 2 || res.Versions != 5 {
		t.Fatalf("Index over kubepkg's index: %v, %+v\n%s\nwant 2 packages, 5 versions", err, res, printed)
	}
	merged, _ := os.ReadFile(filepath.Join(out, sitelayout.IndexFile))
	for _, want := range []string{"version: v1.8.0", "path: kubevirt/charts/operator", "verbs: null", "version: 1.10.0"} {
		if !strings.Contains(string(merged), want) {
			t.Errorf("merged index lacks %q", want)
		}
	}
	if strings.Contains(string(merged), "keywords") || strings.Contains(string(merged), "mirror:") {
		t.Errorf("kbuild wrote fields it does not know:\n%s", merged)
	}
	verifySite(t, out, tr)
}
