package siteread

import (
	"crypto/rand"
	"errors"
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

// TestNewAndNextRootFile: a new root is version 1 written beside its
// chain copy and never over an existing root; the next version keeps the
// previous one in the chain first, once; an edit that is malformed writes
// nothing.
func TestNewAndNextRootFile(t *testing.T) {
	dir := t.TempDir()
	key := func(name string) string {
		k, err := trust.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if err := trust.WriteKeyPair(filepath.Join(dir, name), k); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, name+".pub")
	}
	one := 1
	expires := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	fresh := trust.RootEdit{RootKeys: []string{key("root")}, RootThreshold: &one, IndexKeys: []string{key("index")}, IndexThreshold: &one, Expires: expires}
	site := filepath.Join(dir, "site")
	file := filepath.Join(site, "root.yaml")
	w, err := NewRootFile(file, fresh)
	if err != nil || w.Root.Signed.Version != 1 || w.Chain != filepath.Join(site, "root", "1.yaml") || w.Kept != "" {
		t.Fatalf("NewRootFile = %+v, %v; want version 1 with root/1.yaml", w, err)
	}
	if _, err := NewRootFile(file, fresh); !errors.Is(err, ErrRootExists) {
		t.Errorf("NewRootFile over a root = %v, want ErrRootExists", err)
	}
	out := filepath.Join(dir, "next", "root.yaml")
	for _, tc := range []struct {
		name        string
		edit        trust.RootEdit
		version     int
		kept, chain string
		err         bool
	}{
		{name: "malformed edit", edit: trust.RootEdit{Expires: expires, Delegate: []string{"no-equals"}}, err: true},
		{name: "next keeps the previous", edit: trust.RootEdit{Expires: expires.AddDate(1, 0, 0), IndexKeys: []string{key("index2")}}, version: 2,
			kept: filepath.Join(dir, "next", "root", "1.yaml"), chain: filepath.Join(dir, "next", "root", "2.yaml")},
		{name: "kept once", edit: trust.RootEdit{Expires: expires.AddDate(2, 0, 0)}, version: 2, chain: filepath.Join(dir, "next", "root", "2.yaml")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := NextRootFile(file, out, tc.edit)
			if tc.err {
				var ee *trust.RootEditError
				if !errors.As(err, &ee) {
					t.Fatalf("NextRootFile = %v, want a *trust.RootEditError", err)
				}
				if _, err := os.Stat(filepath.Dir(out)); !os.IsNotExist(err) {
					t.Errorf("NextRootFile with a malformed edit wrote into %s", filepath.Dir(out))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w.Root.Signed.Version != tc.version || w.Kept != tc.kept || w.Chain != tc.chain {
				t.Errorf("NextRootFile = version %d, kept %q, chain %q; want %d, %q, %q", w.Root.Signed.Version, w.Kept, w.Chain, tc.version, tc.kept, tc.chain)
			}
			if got, err := ReadRootFile(out); err != nil || got.Signed.Version != tc.version {
				t.Errorf("%s = %v, %v; want version %d", out, got, err, tc.version)
			}
		})
	}
}
