package site

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestServer checks the routing of kbuild serve: /v2 and below go to the
// layout (none here: 404), every other path to the site, ".." refused
// there and not cleaned away by a mux; Serve returns when ctx is done.
func TestServer(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.yaml"), []byte("apiVersion: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := (&Server{Site: dir}).Handler()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h) }()
	for path, want := range map[string]int{"/index.yaml": 200, "/v2/": 404, "/v2": 404, "/a/../index.yaml": 400} {
		req, _ := http.NewRequest("GET", "http://"+ln.Addr().String(), nil)
		req.URL.Opaque = path
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel = %v, want nil", err)
	}
}

// TestServerServes: what a server names in its log line.
func TestServerServes(t *testing.T) {
	for _, tc := range []struct {
		s    Server
		want string
	}{
		{Server{}, ""},
		{Server{Site: "_site"}, "_site/"},
		{Server{Site: "_site/"}, "_site/"},
		{Server{Layout: "dist/oci"}, "dist/oci"},
		{Server{Site: "_site", Layout: "dist/oci"}, "_site/ and dist/oci"},
	} {
		if got := tc.s.Serves(); got != tc.want {
			t.Errorf("%+v.Serves() = %q, want %q", tc.s, got, tc.want)
		}
	}
}
