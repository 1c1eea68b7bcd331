package publish

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/kubepkgclient"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// subscriberSite is a site with a root chain of two versions — version 1
// gives the index role to key old, version 2 rotates it to key cur — and
// an index signed by cur, with its signature by digest under by-hash/.
type subscriberSite struct {
	root, old, cur *trust.PrivateKey
	data, prevData []byte // the index, and the one published before it
	now            time.Time
}

func newSubscriberSite(t *testing.T) *subscriberSite {
	t.Helper()
	gen := func() *trust.PrivateKey {
		k, err := trust.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	s := &subscriberSite{root: gen(), old: gen(), cur: gen(), now: time.Now().UTC().Truncate(time.Second)}
	idx := func(gen time.Time) []byte {
		x, err := index.NewBuilder().Index(gen)
		if err != nil {
			t.Fatal(err)
		}
		x.Expires = s.now.Add(24 * time.Hour)
		b, err := x.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	s.prevData, s.data = idx(s.now.Add(-2*time.Hour)), idx(s.now.Add(-time.Hour))
	return s
}

// sig returns a signature file of data by keys.
func sigFileOf(t *testing.T, data []byte, keys ...*trust.PrivateKey) []byte {
	t.Helper()
	sigs, err := trust.Sign(data, signersOf(keys)...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := index.MarshalSignatures(sigs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func signersOf(keys []*trust.PrivateKey) []trust.Signer {
	out := make([]trust.Signer, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

// write writes the site into dir with sig as index.yaml.sig (none when
// nil) and a good signature by digest.
func (s *subscriberSite) write(t *testing.T, dir string, sig []byte) {
	t.Helper()
	cfg := trust.RootConfig{Expires: s.now.Add(48 * time.Hour), RootKeys: []*trust.PublicKey{s.root.Public()}, RootThreshold: 1,
		IndexKeys: []*trust.PublicKey{s.old.Public()}, IndexThreshold: 1}
	r1, err := trust.NewRoot(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.IndexKeys = []*trust.PublicKey{s.cur.Public()}
	r2, err := r1.Next(cfg)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{sitelayout.IndexFile: s.data, sitelayout.ByHashSignatureFile(s.data): sigFileOf(t, s.data, s.cur)}
	for i, r := range []*trust.Root{r1, r2} {
		if err := r.Sign(s.root); err != nil {
			t.Fatal(err)
		}
		b, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		files[sitelayout.RootVersionFile(i+1)] = b
		files[sitelayout.RootFile] = b
	}
	if sig != nil {
		files[sitelayout.SignatureFile] = sig
	}
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func pemOf(k *trust.PrivateKey) string { return string(k.Public().PEM()) }

// TestSubscriberSignatureRules: every reader of a published index
// (siteread.ReadIndex: repo verify, sbom, scan, bundle, promote; siteread.LoadBase: publish,
// repo index, withdraw) accepts exactly the index.yaml.sig a kubepkg
// subscriber accepts (kubepkgclient, encoded from kubepkg's client), and a
// good signature by digest never stands in for a bad index.yaml.sig; each
// refusal names index.yaml.sig and says what to do.
func TestSubscriberSignatureRules(t *testing.T) {
	s := newSubscriberSite(t)
	plain := func(k *trust.PrivateKey) []byte {
		raw, err := k.Sign(s.data)
		if err != nil {
			t.Fatal(err)
		}
		return []byte(base64.StdEncoding.EncodeToString(raw) + "\n")
	}
	both := func() []byte { // the old index's signature and this one's, by the same key
		sigs, err := trust.Sign(s.prevData, s.cur)
		if err != nil {
			t.Fatal(err)
		}
		now, err := trust.Sign(s.data, s.cur)
		if err != nil {
			t.Fatal(err)
		}
		b, err := index.MarshalSignatures(append(sigs, now...))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		sig  []byte
		want []string // what kbuild's refusal says; nil when kubepkg accepts
	}{
		{"signed by the index key", sigFileOf(t, s.data, s.cur), nil},
		{"plain base64 signature by the index key", plain(s.cur), nil},
		{"the previous index's signature and this one's", both(), nil},
		{"missing index.yaml.sig", nil, []string{"index.yaml.sig is missing or empty", "by-hash/sha256/", "kubepkg"}},
		{"garbage index.yaml.sig", []byte("signatures: [{keyid: zz, sig: \"!!\"}]\n"), []string{"index.yaml.sig is malformed", "by-hash/sha256/"}},
		{"not a signature at all", []byte("<html>404</html>\n"), []string{"index.yaml.sig is malformed"}},
		{"signed by the rotated-out index key", sigFileOf(t, s.data, s.old), []string{"index.yaml.sig", "rotated out", "by-hash/sha256/"}},
		{"signed by the root key", sigFileOf(t, s.data, s.root), []string{"index.yaml.sig", "is a root key", "by-hash/sha256/"}},
		{"plain signature by the root key", plain(s.root), []string{"index.yaml.sig", "0 valid signature(s)"}},
		{"the previous index's signature only", sigFileOf(t, s.prevData, s.cur), []string{"index.yaml.sig", "different publishes", "by-hash/sha256/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s.write(t, dir, tc.sig)
			kerr := kubepkgclient.LoadWithRoot(kubepkgclient.Dir(dir), []string{pemOf(s.root)}, 1, s.now)
			if (kerr == nil) != (tc.want == nil) {
				t.Fatalf("the table says kubepkg accepts = %v, kubepkgclient says %v", tc.want == nil, kerr)
			}
			tr := func() *trust.Trust { return &trust.Trust{RootKeys: []*trust.PublicKey{s.root.Public()}} }
			_, rerr := siteread.ReadIndexAt(context.Background(), dir, tr(), s.now)
			_, berr := siteread.LoadBase(context.Background(), dir, tr(), false, index.NewBuilder(index.Compact()), nil)
			for what, err := range map[string]error{"siteread.ReadIndex": rerr, "siteread.LoadBase": berr} {
				if tc.want == nil {
					if err != nil {
						t.Errorf("%s = %v; kubepkg accepts it (want accepted)", what, err)
					}
					continue
				}
				if !errors.Is(err, trust.ErrNotSigned) {
					t.Errorf("%s = %v; kubepkg refuses it (%v), want a refusal (ErrNotSigned)", what, err, kerr)
					continue
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s refusal does not say %q:\n%v", what, w, err)
					}
				}
			}
		})
	}
}

// TestSubscriberPlainKeys: with plain index keys, kubepkg takes any
// signature of the file that verifies with a trusted key, whatever keyid it
// names, and so does kbuild.
func TestSubscriberPlainKeys(t *testing.T) {
	s := newSubscriberSite(t)
	good := sigFileOf(t, s.data, s.cur)
	mislabeled := []byte(strings.Replace(string(good), s.cur.KeyID(), s.old.KeyID(), 1))
	for _, tc := range []struct {
		name   string
		sig    []byte
		accept bool
	}{
		{"signed by the key", good, true},
		{"signed by the key under another keyid", mislabeled, true},
		{"signed by another key", sigFileOf(t, s.data, s.old), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kerr := kubepkgclient.VerifyWithKeys(s.data, tc.sig, []string{pemOf(s.cur)})
			if (kerr == nil) != tc.accept {
				t.Fatalf("the table says kubepkg accepts = %v, kubepkgclient says %v", tc.accept, kerr)
			}
			_, err := trust.Verify(s.data, tc.sig, &trust.Trust{IndexKeys: []*trust.PublicKey{s.cur.Public()}}, trust.VerifyOptions{Now: s.now})
			if (err == nil) != tc.accept {
				t.Errorf("trust.Verify = %v; kubepkg accepts = %v", err, tc.accept)
			}
		})
	}
}
