package siteread

import (
	"context"
	"crypto/rand"
	"errors"
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

// TestReadIndex reads a signed index from a file and a URL, and refuses
// what a subscriber refuses.
func TestReadIndex(t *testing.T) {
	k, _ := trust.GenerateKey(rand.Reader)
	stranger, _ := trust.GenerateKey(rand.Reader)
	b := index.NewBuilder()
	if err := b.Add("r", testRecord("op", "1.0.0", "oci://r/op"), nil); err != nil {
		t.Fatal(err)
	}
	data, err := b.Marshal(time.Now().Add(-time.Hour), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := signatureFileOf(data, []trust.Signer{k})
	badSig, _ := signatureFileOf(data, []trust.Signer{stranger})
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, sitelayout.IndexFile), data, 0o644)
	os.WriteFile(filepath.Join(dir, sitelayout.SignatureFile), sig, 0o644)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/index.yaml", "/stranger/index.yaml", "/unsigned/index.yaml":
			w.Write(data)
		case "/index.yaml.sig":
			w.Write(sig)
		case "/stranger/index.yaml.sig":
			w.Write(badSig)
		case "/broken/index.yaml":
			http.Error(w, "oops", http.StatusBadGateway)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	trust := &trust.Trust{IndexKeys: []*trust.PublicKey{k.Public()}}
	for _, tc := range []struct {
		name, location, wantErr string
		notFound                bool
	}{
		{name: "file", location: filepath.Join(dir, sitelayout.IndexFile)},
		{name: "url", location: srv.URL + "/index.yaml"},
		{name: "missing file", location: filepath.Join(t.TempDir(), sitelayout.IndexFile), notFound: true, wantErr: "index.yaml: not found"},
		{name: "404", location: srv.URL + "/none/index.yaml", notFound: true, wantErr: "/none/index.yaml: 404 Not Found"},
		{name: "502", location: srv.URL + "/broken/index.yaml", wantErr: "/broken/index.yaml: 502 Bad Gateway"},
		{name: "unsigned", location: srv.URL + "/unsigned/index.yaml", wantErr: "refused: index.yaml: index is not signed by a trusted key: index.yaml.sig is missing"},
		{name: "signed by another key", location: srv.URL + "/stranger/index.yaml", wantErr: "refused: index.yaml: index is not signed by a trusted key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ReadIndex(context.Background(), tc.location, trust)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Verified.Index.Packages["op"].Versions) != 1 {
					t.Errorf("ReadIndex(%s) = %+v", tc.location, p.Verified.Index.Packages)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ReadIndex(%s) = %v, want an error with %q", tc.location, err, tc.wantErr)
			}
			if got := errors.Is(err, ErrNotFound); got != tc.notFound {
				t.Errorf("errors.Is(%v, ErrNotFound) = %v, want %v", err, got, tc.notFound)
			}
		})
	}
}
