package siteread

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/trust"
)

func TestNew(t *testing.T) {
	for _, tc := range []struct{ ref, index, loc string }{
		{"site", "index.yaml", filepath.Join("site", "index.yaml")},
		{"site/index.yaml", "index.yaml", filepath.Join("site", "index.yaml")},
		{"site/other.yaml", "other.yaml", filepath.Join("site", "other.yaml")},
		{"https://example.com/packages", "index.yaml", "https://example.com/packages/index.yaml"},
		{"https://example.com/packages/", "index.yaml", "https://example.com/packages/index.yaml"},
		{"https://example.com/packages/index.yaml?x=1", "index.yaml", "https://example.com/packages/index.yaml"},
	} {
		s, err := New(tc.ref)
		if err != nil {
			t.Fatal(err)
		}
		if s.IndexName() != tc.index || s.Location(s.IndexName()) != tc.loc {
			t.Errorf("New(%q): %s at %s, want %s at %s", tc.ref, s.IndexName(), s.Location(s.IndexName()), tc.index, tc.loc)
		}
	}
	if _, err := New("oci://example.com/x"); err == nil {
		t.Error("New accepted an oci:// site")
	}
}

func TestFetch(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok.yaml", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) })
	mux.HandleFunc("/big.yaml", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.Repeat("x", 100))) })
	mux.HandleFunc("/chunked.yaml", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 10; i++ {
			w.Write([]byte(strings.Repeat("x", 20)))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/broken.yaml", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	s, _ := New(srv.URL)
	ctx := context.Background()
	if b, err := s.Fetch(ctx, "ok.yaml", 10); err != nil || string(b) != "hello" {
		t.Errorf("Fetch ok = %q, %v", b, err)
	}
	for name, want := range map[string]string{"big.yaml": "more than the 50", "chunked.yaml": "more than the 50", "broken.yaml": "500 Internal Server Error", "missing.yaml": "404"} {
		if _, err := s.Fetch(ctx, name, 50); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Fetch %s = %v, want %q", name, err, want)
		}
	}
	if _, err := s.Fetch(ctx, "missing.yaml", 50); !errors.Is(err, ErrNotFound) {
		t.Errorf("a 404 must wrap ErrNotFound: %v", err)
	}

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.yaml"), []byte(strings.Repeat("y", 1000)), 0o644)
	if _, err := ReadFile(filepath.Join(dir, "nothing.yaml"), 10); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReadFile of a missing file = %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "index.yaml"), 999); err == nil || !strings.Contains(err.Error(), "1000 bytes, more than the 999 allowed") {
		t.Errorf("ReadFile over the limit = %v", err)
	}
	b, err := ReadFile(filepath.Join(dir, "index.yaml"), 1000)
	if err != nil || len(b) != 1000 || b[999] != 'y' {
		t.Errorf("ReadFile = %d bytes, %v", len(b), err)
	}
}

// TestReadFileNotShared: the bytes ReadFile returns are the file's when it
// was read, whatever writes the file afterwards (a mapping shared with the
// file would show the new bytes under an index already verified), and a
// spooled body is mapped only from its unlinked temporary file.
func TestReadFileNotShared(t *testing.T) {
	defer func(n int64) { mapMinSize = n }(mapMinSize)
	mapMinSize = 1
	path := filepath.Join(t.TempDir(), "index.yaml")
	if err := os.WriteFile(path, []byte(strings.Repeat("a", 1<<16)), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(b)
	// Written in place: same inode, new bytes.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(strings.Repeat("b", 1<<16)), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if strings.Count(string(b), "a") != 1<<16 {
		t.Fatal("the bytes ReadFile returned changed when the file was written")
	}
	if kind, _ := mapped.Load(&b[0]); kind == fileMapping {
		t.Fatal("ReadFile mapped a file that has a name")
	}
	// A linked file is never mapped; the same file unlinked is.
	g, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if m, ok := mapFile(g, 1<<16); ok {
		unmap(m)
		t.Fatal("mapFile mapped a file that has a name")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	m, ok := mapFile(g, 1<<16)
	if !ok || m[0] != 'b' {
		t.Fatal("mapFile did not map an unlinked file")
	}
	Release(m)
}

// TestRoots: the root chain is fetched version by version and fetching
// stops at the first missing or refused version.
func TestRoots(t *testing.T) {
	k, _ := trust.GenerateKey(nil)
	pub := []*trust.PublicKey{k.Public()}
	var roots [][]byte
	for v := 1; v <= 5; v++ {
		r, err := trust.NewRoot(trust.RootConfig{Expires: time.Now().Add(time.Hour), RootKeys: pub, RootThreshold: 1, IndexKeys: pub, IndexThreshold: 1})
		if err != nil {
			t.Fatal(err)
		}
		r.Signed.Version = v
		if err := r.Sign(k); err != nil {
			t.Fatal(err)
		}
		b, _ := r.Marshal()
		roots = append(roots, b)
	}
	for _, tc := range []struct {
		name    string
		edit    func(files map[string][]byte)
		fetched []bool // which of root/1..5.yaml Roots fetched
	}{
		{"whole chain", func(map[string][]byte) {}, []bool{true, true, true, true, true}},
		{"missing version", func(f map[string][]byte) { delete(f, "root/2.yaml") }, []bool{true, true, false, false, false}},
		{"junk version", func(f map[string][]byte) { f["root/2.yaml"] = []byte(strings.Repeat("junk ", 1000)) }, []bool{true, true, false, false, false}},
		{"wrong version", func(f map[string][]byte) { f["root/3.yaml"] = roots[3] }, []bool{true, true, true, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{"root.yaml": roots[4]}
			for v, b := range roots {
				files[fmt.Sprintf("root/%d.yaml", v+1)] = b
			}
			tc.edit(files)
			got := map[string]bool{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				name := strings.TrimPrefix(r.URL.Path, "/")
				got[name] = true
				b, ok := files[name]
				if !ok {
					http.NotFound(w, r)
					return
				}
				w.Write(b)
			}))
			defer srv.Close()
			s, _ := New(srv.URL)
			trust := trust.Trust{RootKeys: pub}
			if err := s.Roots(context.Background(), &trust, 1); err != nil {
				t.Fatal(err)
			}
			for v, want := range tc.fetched {
				name := fmt.Sprintf("root/%d.yaml", v+1)
				if got[name] != want {
					t.Errorf("fetched %s = %v, want %v", name, got[name], want)
				}
				if _, ok := files[name]; ok && want != (trust.Roots[v] != nil) {
					t.Errorf("trust.Roots[%d] set = %v, want %v", v, trust.Roots[v] != nil, want)
				}
			}
		})
	}
}

// endless is a body that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestFetchEndlessBody: an endless body of unknown length is refused at the
// limit; memory does not grow with it (what passes the in-memory part goes
// to a temporary file) and nothing is left in TMPDIR.
func TestFetchEndlessBody(t *testing.T) {
	defer func(n int64) { spoolMinSize = n }(spoolMinSize)
	spoolMinSize = 1 << 20
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		io.Copy(w, endless{})
	}))
	defer srv.Close()
	s, _ := New(srv.URL)
	const limit = 64 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := s.Fetch(context.Background(), "index.yaml", limit)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "more than the 67108864 bytes allowed") {
		t.Fatalf("Fetch(endless body) = %v, want a refusal at the limit", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("Fetch(endless body, limit %d) allocated %d bytes, want at most 16 MiB", limit, alloc)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("Fetch left %d files in TMPDIR", len(left))
	}
	// A body just over the in-memory part is kept whole.
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush() // no Content-Length
		io.Copy(w, io.LimitReader(endless{}, 3<<20))
	}))
	defer srv2.Close()
	s2, _ := New(srv2.URL)
	if b, err := s2.Fetch(context.Background(), "index.yaml", limit); err != nil || len(b) != 3<<20 {
		t.Errorf("Fetch(3 MiB body) = %d bytes, %v; want 3 MiB", len(b), err)
	}
}

// TestVerifyReadsIndexYamlSig: Verify checks index.yaml.sig, the only
// signature kubepkg reads; the signature by digest is an extra check when
// present and never stands in for a missing or bad index.yaml.sig, which
// is refused before the index is read (a malformed one even over an index
// that is not YAML).
func TestVerifyReadsIndexYamlSig(t *testing.T) {
	k, err := trust.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := trust.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	x, err := index.NewBuilder().Index(time.Date(2026, 10, 10, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	data, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	sigOf := func(b []byte, key *trust.PrivateKey) string {
		sigs, err := trust.Sign(b, key)
		if err != nil {
			t.Fatal(err)
		}
		out, err := index.MarshalSignatures(sigs)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	good, byOther := sigOf(data, k), sigOf(data, other)
	garbage := "signatures: [{keyid: nothex, sig: \"!!\"}]\n"
	notYAML := []byte(strings.Repeat("\x00not yaml\n", 1<<10))
	for _, tc := range []struct {
		name        string
		index       []byte
		sig, byHash string // "" for none
		want        string // "" for accepted
	}{
		{"good index.yaml.sig", data, good, "", ""},
		{"good index.yaml.sig and by-hash", data, good, good, ""},
		{"missing index.yaml.sig, good by-hash", data, "", good, "index.yaml.sig is missing or empty"},
		{"garbage index.yaml.sig, good by-hash", data, garbage, good, "index.yaml.sig is malformed"},
		{"index.yaml.sig by another key, good by-hash", data, byOther, good, "by-hash/"},
		{"good index.yaml.sig, garbage by-hash", data, good, garbage, "malformed"},
		{"good index.yaml.sig, by-hash by another key", data, good, byOther, "holds 0 valid signature(s)"},
		{"garbage index.yaml.sig over an index that is not YAML", notYAML, garbage, "", "index.yaml.sig is malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "index.yaml"), tc.index, 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.sig != "" {
				if err := os.WriteFile(filepath.Join(dir, "index.yaml.sig"), []byte(tc.sig), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.byHash != "" {
				os.MkdirAll(filepath.Join(dir, "by-hash"), 0o755)
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("by-hash/%x.sig", sha256Sum(tc.index))), []byte(tc.byHash), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := New(dir, WithSignatureFor(func(hex string) string { return "by-hash/" + hex + ".sig" }))
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Verify(context.Background(), &trust.Trust{IndexKeys: []*trust.PublicKey{k.Public()}}, trust.VerifyOptions{Now: time.Date(2026, 10, 11, 0, 0, 0, 0, time.UTC)})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Verify = %v, want accepted", err)
				}
				return
			}
			if !errors.Is(err, trust.ErrNotSigned) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify = %v, want a refusal (ErrNotSigned) saying %q", err, tc.want)
			}
		})
	}
}

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }

// TestRootChainBounds: a validly signed root chain is refused, before its
// roots are parsed or held, when one root is over trust.MaxRootSize or the
// chain over trust.MaxRootChainSize (a thousand roots of 0.9 MiB made a
// reader run out of memory), and a root listing more than
// trust.MaxRootKeys keys is refused before its keys are parsed.
func TestRootChainBounds(t *testing.T) {
	rootKey, err := trust.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	indexKey, err := trust.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	expires := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	cfg := trust.RootConfig{Expires: expires, RootKeys: []*trust.PublicKey{rootKey.Public()}, RootThreshold: 1, IndexKeys: []*trust.PublicKey{indexKey.Public()}, IndexThreshold: 1}
	// chain writes n validly signed versions, each padded with YAML
	// comments (which the signatures do not cover) to pad bytes.
	chain := func(t *testing.T, n, pad int) string {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "root"), 0o755)
		var r *trust.Root
		for v := 1; v <= n; v++ {
			if r == nil {
				r, err = trust.NewRoot(cfg)
			} else {
				r, err = r.Next(cfg)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Sign(rootKey); err != nil {
				t.Fatal(err)
			}
			b, err := r.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < pad {
				b = append(b, strings.Repeat("# padding, not signed\n", (pad-len(b))/22)...)
			}
			os.WriteFile(filepath.Join(dir, "root", fmt.Sprintf("%d.yaml", v)), b, 0o644)
			if v == n {
				os.WriteFile(filepath.Join(dir, "root.yaml"), b, 0o644)
			}
		}
		os.WriteFile(filepath.Join(dir, "index.yaml"), []byte("apiVersion: kubepkg.dev/v1\n"), 0o644)
		return dir
	}
	manyKeys := func(t *testing.T) string {
		dir := chain(t, 1, 0)
		var b strings.Builder
		b.WriteString("signed:\n  version: 1\n  expires: " + expires.Format(time.RFC3339) + "\n  keys:\n")
		for i := 0; i <= trust.MaxRootKeys; i++ {
			fmt.Fprintf(&b, "    \"%064x\": x\n", i)
		}
		b.WriteString("  roles: {}\nsignatures: []\n")
		os.WriteFile(filepath.Join(dir, "root", "1.yaml"), []byte(b.String()), 0o644)
		return dir
	}
	for _, tc := range []struct {
		name string
		dir  func(*testing.T) string
		want string
	}{
		{"a chain of three small roots", func(t *testing.T) string { return chain(t, 3, 0) }, "index.yaml.sig is missing"},
		{"one root over MaxRootSize", func(t *testing.T) string { return chain(t, 2, trust.MaxRootSize+100) }, fmt.Sprintf("more than the %d allowed", trust.MaxRootSize)},
		{"a chain over MaxRootChainSize", func(t *testing.T) string { return chain(t, trust.MaxRootChainSize/(100<<10)+2, 100<<10) }, "MaxRootChainSize"},
		{"a root over MaxRootKeys", manyKeys, "MaxRootKeys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.dir(t))
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Verify(context.Background(), &trust.Trust{RootKeys: []*trust.PublicKey{rootKey.Public()}}, trust.VerifyOptions{Now: time.Now()})
			var ve *trust.VerificationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify = %v, want a refusal saying %q", err, tc.want)
			}
		})
	}
}
