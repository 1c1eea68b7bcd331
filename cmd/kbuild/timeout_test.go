package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTimeoutFlag: --timeout bounds how long kbuild fetch waits on a server
// that sends headers and then nothing, and the error says what stalled.
func TestTimeoutFlag(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte("x"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	dir := t.TempDir()
	recipe := `apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: stall
  annotations: {kubepkg.dev/description: "a source that stalls"}
spec:
  version: v1.0.0
  build: 1
  sources:
    upstream:
      url: ` + srv.URL + `/stall.yaml
      sha256: sha256:3f1c0000000000000000000000000000000000000000000000000000000000aa
  charts:
    stall: {from: [upstream]}
  package:
    rollback: {safe: true}
`
	if err := os.WriteFile(filepath.Join(dir, "recipe.yaml"), []byte(recipe), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runInProcess("fetch", "--cache-dir", t.TempDir(), "--timeout", "300ms", dir)
	if r.code == 0 || !strings.Contains(r.stderr, "no data for 300ms after 1 bytes") || !strings.Contains(r.stderr, srv.URL+"/stall.yaml") {
		t.Fatalf("kbuild fetch --timeout 300ms against a stalling server: %s", r)
	}
}
