package site

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "site")
	if err := Write(dir, testIndex(t)); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"index.yaml":             "apiVersion: kubepkg.dev/v1alpha1\n",
		"index.yaml.sig":         "c2ln\n",
		"sbom/x.cdx.json":        "{}",
		"empty/.keep":            "",
		"blob.bin":               "\x00\x01",
		"docs/index.html":        "<p>docs</p>",
		"../secret.txt":          "outside",
		"packages/notes.unknown": "x",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(parent, "secret.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(dir)
	if err != nil {
		t.Fatal(err)
	}
	// No ServeMux: it would clean ".." away before the handler sees it.
	srv := httptest.NewServer(http.StripPrefix("/repo", h))
	defer srv.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	for _, tc := range []struct {
		name, method, path string
		want               int
		wantType           string
		wantBody           string // substring
		wantLocation       string
	}{
		{name: "root is index.html", method: "GET", path: "/repo/", want: 200, wantType: "text/html; charset=utf-8", wantBody: "<!DOCTYPE html>"},
		{name: "page", method: "GET", path: "/repo/packages/kubevirt.html", want: 200, wantType: "text/html; charset=utf-8", wantBody: "kubevirt"},
		{name: "css", method: "GET", path: "/repo/style.css", want: 200, wantType: "text/css; charset=utf-8"},
		{name: "js", method: "GET", path: "/repo/search.js", want: 200, wantType: "text/javascript; charset=utf-8"},
		{name: "svg", method: "GET", path: "/repo/favicon.svg", want: 200, wantType: "image/svg+xml"},
		{name: "yaml", method: "GET", path: "/repo/index.yaml", want: 200, wantType: "application/yaml; charset=utf-8", wantBody: "kubepkg.dev"},
		{name: "signature", method: "GET", path: "/repo/index.yaml.sig", want: 200, wantType: "text/plain; charset=utf-8"},
		{name: "json", method: "GET", path: "/repo/sbom/x.cdx.json", want: 200, wantType: "application/json"},
		{name: "unknown extension", method: "GET", path: "/repo/packages/notes.unknown", want: 200, wantType: "application/octet-stream"},
		{name: "HEAD", method: "HEAD", path: "/repo/index.html", want: 200, wantType: "text/html; charset=utf-8"},
		{name: "directory index", method: "GET", path: "/repo/docs/", want: 200, wantBody: "docs"},
		{name: "directory redirect is relative", method: "GET", path: "/repo/docs?x=1", want: 301, wantLocation: "docs/?x=1"},
		{name: "no listing", method: "GET", path: "/repo/packages/", want: 404},
		{name: "no listing of an empty directory", method: "GET", path: "/repo/empty/", want: 404},
		{name: "missing", method: "GET", path: "/repo/nope.html", want: 404},
		{name: "outside the prefix", method: "GET", path: "/index.html", want: 404},
		{name: "dot dot", method: "GET", path: "/repo/packages/../../secret.txt", want: 400},
		{name: "encoded dot dot", method: "GET", path: "/repo/packages/%2e%2e/%2e%2e/secret.txt", want: 400},
		{name: "symlink out of the site", method: "GET", path: "/repo/link.txt", want: 404},
		{name: "write", method: "PUT", path: "/repo/index.html", want: 405},
		{name: "delete", method: "DELETE", path: "/repo/index.yaml", want: 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Build the request by hand so that the client does not clean "..".
			req, err := http.NewRequest(tc.method, srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.URL.Opaque = tc.path
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.want {
				t.Fatalf("%s %s = %d, want %d\n%s", tc.method, tc.path, resp.StatusCode, tc.want, body)
			}
			if tc.wantType != "" && resp.Header.Get("Content-Type") != tc.wantType {
				t.Errorf("Content-Type = %q, want %q", resp.Header.Get("Content-Type"), tc.wantType)
			}
			if !strings.Contains(string(body), tc.wantBody) {
				t.Errorf("body lacks %q: %.200s", tc.wantBody, body)
			}
			if strings.Contains(string(body), "outside") {
				t.Errorf("served a file outside the site: %s", body)
			}
			if tc.wantLocation != "" && resp.Header.Get("Location") != tc.wantLocation {
				t.Errorf("Location = %q, want %q", resp.Header.Get("Location"), tc.wantLocation)
			}
		})
	}
}

func TestNewHandlerRefuses(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	for _, dir := range []string{filepath.Join(t.TempDir(), "absent"), file} {
		if _, err := NewHandler(dir); err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("NewHandler(%s) = %v, want an error naming it", dir, err)
		}
	}
}
