package fetchsite

import (
	"context"
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
	defer func(n int64) { mapMinSize = n }(mapMinSize)
	for _, min := range []int64{1 << 40, 1} { // read, then mapped
		mapMinSize = min
		b, err := ReadFile(filepath.Join(dir, "index.yaml"), 1000)
		if err != nil || len(b) != 1000 || b[999] != 'y' {
			t.Errorf("ReadFile (map from %d bytes) = %d bytes, %v", min, len(b), err)
		}
		Release(b)
	}
}

func TestRoots(t *testing.T) {
	k, _ := index.GenerateKey(nil)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "root"), 0o755)
	var last []byte
	for v := 1; v <= 3; v++ {
		r, err := index.NewRoot(index.RootConfig{Expires: time.Now().Add(time.Hour), RootKeys: []*index.PublicKey{k.Public()}, RootThreshold: 1, IndexKeys: []*index.PublicKey{k.Public()}, IndexThreshold: 1})
		if err != nil {
			t.Fatal(err)
		}
		r.Signed.Version = v
		last, _ = r.Marshal()
		if v != 2 {
			os.WriteFile(filepath.Join(dir, "root", fmt.Sprintf("%d.yaml", v)), last, 0o644)
		}
	}
	os.WriteFile(filepath.Join(dir, "root.yaml"), last, 0o644)
	s, _ := New(dir)
	var trust index.Trust
	if err := s.Roots(context.Background(), &trust, 1); err != nil {
		t.Fatal(err)
	}
	if len(trust.Roots) != 3 || trust.Roots[0] == nil || trust.Roots[1] != nil || trust.Roots[2] == nil || trust.Latest == nil {
		t.Fatalf("Roots: %d versions, missing ones must be nil", len(trust.Roots))
	}
	var from3 index.Trust
	s.Roots(context.Background(), &from3, 3)
	if from3.Roots[0] != nil || from3.Roots[2] == nil {
		t.Fatal("Roots from version 3 fetched earlier versions")
	}
}
