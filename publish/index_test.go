package publish

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/trust"
)

// indexInto runs Index over distDir into site/index.yaml, signed by key and
// generated at generated, with extra options; it returns the result and
// what was printed.
func indexInto(t *testing.T, distDir, site string, key *trust.PrivateKey, generated time.Time, extra ...Option) (*Result, string, error) {
	t.Helper()
	var out bytes.Buffer
	p, err := New(append([]Option{WithSigners(key), WithGenerated(generated), WithExpires(30 * 24 * time.Hour), WithOutput(&out, &out)}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Index(context.Background(), distDir, filepath.Join(site, sitelayout.IndexFile))
	return res, out.String(), err
}

// TestIndexMerge indexes build records over a published base, as kbuild
// repo index --merge does: a base file or URL verified with its key is
// merged (a version built again with the same content is kept once); a
// base signed by a stranger, a published version with other content and a
// missing base without allowNew are refused and write nothing; merging
// keeps every published version.
func TestIndexMerge(t *testing.T) {
	dir := t.TempDir()
	key, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	trusted := &trust.Trust{IndexKeys: []*trust.PublicKey{key.Public()}}
	digest := func(b []byte) string {
		sum := sha256.Sum256(b)
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	chart := digest([]byte("chart"))
	dist1 := filepath.Join(dir, "dist1")
	writeRecord(t, dist1, record("kubevirt", "1.9.0", 4, "oci://r/kubevirt", chart))
	earlier := time.Now().Add(-2 * time.Hour).UTC().Truncate(time.Second)
	base := filepath.Join(dir, "base")
	if _, out, err := indexInto(t, dist1, base, key, earlier); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	strangerBase := filepath.Join(dir, "stranger-base")
	if _, out, err := indexInto(t, dist1, strangerBase, stranger, earlier); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()

	dist2 := filepath.Join(dir, "dist2")
	writeRecord(t, dist2, record("kubevirt", "1.10.0", 1, "oci://r/kubevirt", chart))
	writeRecord(t, dist2, record("kubevirt", "1.9.0", 4, "oci://r/kubevirt", chart)) // rebuilt, same content
	distConflict := filepath.Join(dir, "dist3")
	conflict := record("kubevirt", "1.9.0", 4, "oci://r/kubevirt", digest([]byte("other chart")))
	writeRecord(t, distConflict, conflict)
	generated := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)

	x := func(d string) *index.RepositoryIndex {
		b, err := os.ReadFile(filepath.Join(d, sitelayout.IndexFile))
		if err != nil {
			t.Fatal(err)
		}
		x, err := index.ParseIndex(b)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	published, _ := x(base).Packages["kubevirt"].Versions[0].Spec.Digest()
	conflictDigest, _ := conflict.Spec.Digest()
	for _, tc := range []struct {
		name     string
		dist     string
		merge    string
		allowNew bool
		wantErr  string // "" for success: then 1 package, 2 versions
	}{
		{name: "merge a file", dist: dist2, merge: filepath.Join(base, sitelayout.IndexFile)},
		{name: "merge a URL", dist: dist2, merge: srv.URL + "/base/index.yaml"},
		{name: "base signed by a stranger", dist: dist2, merge: srv.URL + "/stranger-base/index.yaml",
			wantErr: "failed verification, so nothing was published or re-signed: index.yaml: index is not signed by a trusted key"},
		{name: "conflict", dist: distConflict, merge: srv.URL + "/base/",
			wantErr: "kubevirt 1.9.0 build 4 is already published with different content (published " + published + ", built " + conflictDigest + "); published versions do not change, give the recipe a new build number"},
		{name: "404 base without allowNew", dist: dist2, merge: srv.URL + "/nothing/index.yaml", wantErr: "no published index: the published index " + srv.URL + "/nothing/index.yaml does not exist"},
		{name: "missing file base without allowNew", dist: dist2, merge: filepath.Join(dir, "nothing", sitelayout.IndexFile), wantErr: "no published index: the published index " + filepath.Join(dir, "nothing", sitelayout.IndexFile) + " does not exist"},
		{name: "404 base with allowNew", dist: dist2, merge: srv.URL + "/nothing/index.yaml", allowNew: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := filepath.Join(t.TempDir(), "site")
			res, out, err := indexInto(t, tc.dist, site, key, generated, WithMerge(tc.merge, trusted, tc.allowNew))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Index: %v\n%s", err, out)
				}
				if res.Packages != 1 || res.Versions != 2 {
					t.Fatalf("wrote %d packages, %d versions; want 1 packages, 2 versions", res.Packages, res.Versions)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Index = %v\n%s\nwant an error containing %q", err, out, tc.wantErr)
			}
			if _, err := os.Stat(filepath.Join(site, sitelayout.IndexFile)); err == nil {
				t.Error("an index was written although the publish failed")
			}
		})
	}
	// Merging keeps every published version.
	merged := filepath.Join(dir, "merged")
	if _, out, err := indexInto(t, dist1, merged, key, generated, WithMerge(filepath.Join(base, sitelayout.IndexFile), trusted, false)); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	dist4 := filepath.Join(dir, "dist4")
	writeRecord(t, dist4, record("cdi", "1.66.1", 1, "oci://r/cdi", chart))
	if _, out, err := indexInto(t, dist4, merged, key, generated, WithMerge(filepath.Join(merged, sitelayout.IndexFile), trusted, false)); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if p, v := x(merged).Counts(); p != 2 || v != 2 {
		t.Fatalf("merged index has %d packages, %d versions", p, v)
	}
}

// wrappedKey is a Signer that is not a *trust.PrivateKey (as a KMS key
// would be): SignMessage gives it the index whole.
type wrappedKey struct{ k *trust.PrivateKey }

func (w wrappedKey) KeyID() string                 { return w.k.KeyID() }
func (w wrappedKey) Public() *trust.PublicKey      { return w.k.Public() }
func (w wrappedKey) Sign(m []byte) ([]byte, error) { return w.k.Sign(m) }

// TestIndexSignedFiles checks the files Index writes, signed while the
// index is written: index.yaml is the Builder's Marshal of the records,
// byte for byte; index.yaml.sig is exactly what signing those bytes in
// memory gives, for an ed25519 key and for another Signer; the copy under
// by-hash/ is named after the index's SHA-256; nothing else is left.
func TestIndexSignedFiles(t *testing.T) {
	dist := t.TempDir()
	chart := "sha256:" + strings.Repeat("c", 64)
	b := index.NewBuilder()
	for i, name := range []string{"kubevirt", "cdi", "cert-manager"} {
		for v := 0; v < 40; v++ {
			rec := record(name, fmt.Sprintf("1.%d.%d", v, i), 1+v%3, "oci://r/"+name, chart)
			writeRecord(t, dist, rec)
			if err := b.Add("r", rec, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	generated := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	want, err := b.Marshal(generated, generated.Add(30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	k1, _ := trust.GenerateKey(rand.Reader)
	k2, _ := trust.GenerateKey(rand.Reader)
	for _, tc := range []struct {
		name    string
		signers []trust.Signer
	}{
		{"one key", []trust.Signer{k1}},
		{"two keys", []trust.Signer{k2, k1}},
		{"a key and another signer", []trust.Signer{k1, wrappedKey{k2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := filepath.Join(t.TempDir(), "site")
			var out bytes.Buffer
			p, err := New(WithSigners(tc.signers...), WithGenerated(generated), WithExpires(30*24*time.Hour), WithOutput(&out, &out))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Index(context.Background(), dist, filepath.Join(site, sitelayout.IndexFile)); err != nil {
				t.Fatalf("Index: %v\n%s", err, out.String())
			}
			got, err := os.ReadFile(filepath.Join(site, sitelayout.IndexFile))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("index.yaml differs from Marshal of the same records (%d bytes, want %d)", len(got), len(want))
			}
			wantSig, err := signatureFileOf(want, tc.signers)
			if err != nil {
				t.Fatal(err)
			}
			sig, err := os.ReadFile(filepath.Join(site, sitelayout.IndexFile+".sig"))
			if err != nil || !bytes.Equal(sig, wantSig) {
				t.Fatalf("index.yaml.sig = %q, %v; want %q, what signing the index in memory gives", sig, err, wantSig)
			}
			sum := sha256.Sum256(want)
			byHash, err := os.ReadFile(filepath.Join(site, "by-hash", "sha256", hex.EncodeToString(sum[:])+".sig"))
			if err != nil || !bytes.Equal(byHash, wantSig) {
				t.Fatalf("by-hash signature = %q, %v; want the signature, named after the index's sha256", byHash, err)
			}
			var keys []*trust.PublicKey
			for _, k := range []*trust.PrivateKey{k1, k2} {
				keys = append(keys, k.Public())
			}
			sigs, err := index.ParseSignatures(sig)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range sigs {
				raw, _ := base64.StdEncoding.DecodeString(s.Sig)
				ok := false
				for _, k := range keys {
					ok = ok || (s.KeyID == "" || k.KeyID() == s.KeyID) && k.Verify(got, raw) // one key: the file form without keyid
				}
				if !ok {
					t.Errorf("the signature of %q does not verify", s.KeyID)
				}
			}
			ents, _ := os.ReadDir(site)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if strings.Join(names, " ") != "by-hash index.yaml index.yaml.sig" {
				t.Errorf("the site holds %v; want by-hash, index.yaml and index.yaml.sig only (the publish lock is outside the site)", names)
			}
		})
	}
}

// failingKey is a Signer whose key is gone (a KMS that refuses).
type failingKey struct{ wrappedKey }

func (failingKey) Sign([]byte) ([]byte, error) { return nil, errors.New("key service unavailable") }

// TestIndexSignFails checks that when a signature cannot be made while
// the index is written, the error says so and nothing is left: no index,
// no signature, no temporary file, and an index already there is kept.
func TestIndexSignFails(t *testing.T) {
	dist := t.TempDir()
	writeRecord(t, dist, record("kubevirt", "1.9.0", 4, "oci://r/kubevirt", "sha256:"+strings.Repeat("c", 64)))
	k, _ := trust.GenerateKey(rand.Reader)
	site := filepath.Join(t.TempDir(), "site")
	os.MkdirAll(site, 0o755)
	os.WriteFile(filepath.Join(site, sitelayout.IndexFile), []byte("the index published before\n"), 0o644)
	var out bytes.Buffer
	p, err := New(WithSigners(k, failingKey{wrappedKey{k}}), WithGenerated(time.Now().Add(-time.Hour)), WithExpires(24*time.Hour), WithOutput(&out, &out))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Index(context.Background(), dist, filepath.Join(site, sitelayout.IndexFile))
	if err == nil || !strings.Contains(err.Error(), "key service unavailable") || !strings.Contains(err.Error(), "sign ") {
		t.Fatalf("Index = %v; want the signer's error", err)
	}
	if got, _ := os.ReadFile(filepath.Join(site, sitelayout.IndexFile)); string(got) != "the index published before\n" {
		t.Errorf("index.yaml = %q; the one there before must be kept", got)
	}
	ents, _ := os.ReadDir(site)
	for _, e := range ents {
		if e.Name() != sitelayout.IndexFile {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
