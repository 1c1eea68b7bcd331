package siteread

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/trust"
)

func TestRootFiles(t *testing.T) {
	site := t.TempDir()
	file := filepath.Join(site, sitelayout.RootFile)
	rootKey, _ := trust.GenerateKey(rand.Reader)
	other, _ := trust.GenerateKey(rand.Reader)
	idx, _ := trust.GenerateKey(rand.Reader)
	c := trust.RootConfig{Expires: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), RootKeys: []*trust.PublicKey{rootKey.Public()}, RootThreshold: 1,
		IndexKeys: []*trust.PublicKey{idx.Public()}, IndexThreshold: 1}
	r1, err := trust.NewRoot(c)
	if err != nil {
		t.Fatal(err)
	}
	chain, err := WriteRootVersion(file, r1, true)
	if err != nil || chain != filepath.Join(site, "root", "1.yaml") {
		t.Fatalf("WriteRootVersion(fresh) = %q, %v; want %s", chain, err, filepath.Join(site, "root", "1.yaml"))
	}
	if _, err := WriteRootVersion(file, r1, true); err == nil || !strings.Contains(err.Error(), "refusing to overwrite a root of trust") {
		t.Errorf("WriteRootVersion(fresh) over a root = %v, want a refusal", err)
	}
	// Signing updates the chain copy of the same content.
	r, err := SignRootFile(file, rootKey)
	if err != nil || len(r.Signatures) != 1 {
		t.Fatalf("SignRootFile = %v, %v; want one signature", r, err)
	}
	for _, p := range []string{file, chain} {
		got, err := ReadRootFile(p)
		if err != nil || len(got.Signatures) != 1 {
			t.Errorf("%s after signing: %v, %v; want one signature", p, got, err)
		}
	}
	// The next version: the previous is kept in the chain, the new one is
	// written beside it, and signing it leaves version 1 alone.
	c.Expires = c.Expires.AddDate(1, 0, 0)
	r2, err := r.Next(c)
	if err != nil {
		t.Fatal(err)
	}
	if kept, err := KeepRootVersion(file, r); err != nil || kept != "" {
		t.Errorf("KeepRootVersion of a version in the chain = %q, %v; want nothing written", kept, err)
	}
	if chain2, err := WriteRootVersion(file, r2, false); err != nil || chain2 != filepath.Join(site, "root", "2.yaml") {
		t.Fatalf("WriteRootVersion(next) = %q, %v", chain2, err)
	}
	if _, err := SignRootFile(file, other); err != nil {
		t.Fatal(err)
	}
	if v1, _ := ReadRootFile(chain); v1.Signed.Version != 1 || len(v1.Signatures) != 1 {
		t.Errorf("root/1.yaml after signing version 2 = version %d with %d signatures; want version 1 untouched", v1.Signed.Version, len(v1.Signatures))
	}
	// Several keys sign in one write; none is an error that changes nothing.
	if r2, err = SignRootFile(file, rootKey, other); err != nil || len(r2.Signatures) != 2 {
		t.Fatalf("SignRootFile with two keys = %v, %v; want two signatures", r2, err)
	}
	if _, err := SignRootFile(file); err == nil || !strings.Contains(err.Error(), "needs a key") {
		t.Errorf("SignRootFile without a key = %v; want an error saying it needs one", err)
	}
	if got, _ := ReadRootFile(file); got == nil || len(got.Signatures) != 2 {
		t.Errorf("root after SignRootFile without a key = %v; want it unchanged", got)
	}
	os.Remove(chain)
	if kept, err := KeepRootVersion(file, r); err != nil || kept != chain {
		t.Errorf("KeepRootVersion of a missing chain copy = %q, %v; want %s written", kept, err, chain)
	}
	if err := os.WriteFile(file, []byte("kind: Root\nsigned: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRootFile(file); err == nil || !strings.Contains(err.Error(), file+": ") {
		t.Errorf("ReadRootFile of a broken root = %v; want an error naming the file", err)
	}
}
