package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTimeoutFlag: --timeout bounds how long kbuild fetch waits on a server
// that sends headers and then nothing, and the error says what stalled.
func TestTimeoutFlag(t *testing.T) {
	srv := stallingServer(t, 1000, "x")
	dir := oneSourceRecipe(t, "stall", "url: "+srv.URL+"/stall.yaml\n      sha256: sha256:3f1c0000000000000000000000000000000000000000000000000000000000aa")
	r := runInProcess("fetch", "--cache-dir", t.TempDir(), "--timeout", "300ms", dir)
	if r.code == 0 || !strings.Contains(r.stderr, "no data for 300ms after 1 bytes") || !strings.Contains(r.stderr, srv.URL+"/stall.yaml") {
		t.Fatalf("kbuild fetch --timeout 300ms against a stalling server: %s", r)
	}
}

// TestPluginTimeoutFlag: --plugin-timeout ends a source plugin that runs
// too long, with its process group.
func TestPluginTimeoutFlag(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "kubepkg-source-hang"), []byte("#!/bin/sh\nsleep 600 &\nsleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := oneSourceRecipe(t, "hang", "plugin: hang")
	r := runInProcess("fetch", "--cache-dir", t.TempDir(), "--plugin-timeout", "500ms", dir)
	if r.code == 0 || !strings.Contains(r.stderr, "timed out after 500ms") {
		t.Fatalf("kbuild fetch --plugin-timeout 500ms with a hanging plugin: %s", r)
	}
}

// TestPluginTimeoutSteps: --plugin-timeout bounds step plugins too (they
// had a fixed five minutes and no flag).
func TestPluginTimeoutSteps(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "kubepkg-step-hang"), []byte("#!/bin/sh\nsleep 600 &\nsleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := oneSourceRecipe(t, "hang", "dir: chart")
	recipe, _ := os.ReadFile(filepath.Join(dir, "recipe.yaml"))
	recipe = []byte(strings.Replace(string(recipe), "hang: {from: [upstream]}", "hang: {from: [upstream], steps: [{plugin: hang}]}", 1))
	recipe = append(recipe, "    images: []\n    variants: [{name: default, components: [{name: hang, path: hang}]}]\n"...)
	for name, body := range map[string]string{
		"recipe.yaml":             string(recipe),
		"chart/Chart.yaml":        "apiVersion: v2\nname: hang\nversion: 1.0.0\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := runInProcess("build", "--cache-dir", t.TempDir(), "-o", t.TempDir(), "--plugin-timeout", "500ms", dir)
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "did not finish within 500ms") {
		t.Fatalf("kbuild build --plugin-timeout 500ms with a hanging step plugin: %s", r)
	}
}

// TestIndexTimeoutFlag: every command that reads a published index gives
// up on a site that sends headers and then nothing after --timeout, and
// says which file stalled.
func TestIndexTimeoutFlag(t *testing.T) {
	srv := stallingServer(t, 100000, "apiVersion: kubepkg.dev/v1alpha1\n")
	dir := t.TempDir()
	key := keygen(t, dir, "index") + ".pub"
	url := srv.URL + "/index.yaml"
	recipes := filepath.Join("..", "..", "examples")
	for _, args := range [][]string{
		{"repo", "verify", "--index", url, "--public-key", key},
		{"sbom", "--index", url, "-o", filepath.Join(dir, "bom.json"), "--public-key", key},
		{"scan", "--index", url, "--public-key", key},
		{"plan", recipes, "--index", url, "--public-key", key},
		{"diff", filepath.Join(recipes, "smart-proxy"), "--index", url, "--public-key", key, "--cache-dir", t.TempDir()},
		{"rebuild-check", filepath.Join(recipes, "smart-proxy"), "--index", url, "--public-key", key, "--cache-dir", t.TempDir()},
		{"validate", filepath.Join(recipes, "smart-proxy"), "--index", url, "--public-key", key, "--offline", "--cache-dir", t.TempDir()},
		{"bundle", "create", "smart-proxy", "--index", url, "--public-key", key, "-o", filepath.Join(dir, "b.tar")},
		{"repo", "index", sbomDist, "--index", url, "--public-key", key, "-o", filepath.Join(dir, "index.yaml")},
		{"repo", "withdraw", "kubevirt@1.9.0", "--build", "4", "--reason", "test", "--sign-key", strings.TrimSuffix(key, ".pub") + ".key",
			"--index", url, "--public-key", key, "--site", filepath.Join(dir, "site"), "--suites", filepath.Join(dir, "no-suites.yaml")},
	} {
		t.Run(strings.Join(args[:2], "_"), func(t *testing.T) {
			r := runInProcess(append(args, "--timeout", "300ms")...)
			if r.code == 0 || !strings.Contains(r.stderr, "no data for 300ms") || !strings.Contains(r.stderr, url) {
				t.Fatalf("kbuild %s --timeout 300ms against a stalling site: %s", strings.Join(args, " "), r)
			}
		})
	}
}

// stallingServer answers every request with the headers of a body of size
// bytes, sends head, and then nothing until the client gives up or the
// test ends.
func stallingServer(t *testing.T, size int, head string) *httptest.Server {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.Write([]byte(head))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return srv
}

// oneSourceRecipe writes, in a new directory it returns, a recipe named
// name with one source, upstream, whose fields are source (YAML lines
// indented by six spaces after the first), and one chart made of it.
func oneSourceRecipe(t *testing.T, name, source string) string {
	t.Helper()
	dir := t.TempDir()
	recipe := `apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: ` + name + `
  annotations: {kubepkg.dev/description: "a test recipe with one source"}
spec:
  version: v1.0.0
  build: 1
  sources:
    upstream:
      ` + source + `
  charts:
    ` + name + `: {from: [upstream]}
  package:
    rollback: {safe: true}
`
	if err := os.WriteFile(filepath.Join(dir, "recipe.yaml"), []byte(recipe), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// stallingPushRegistry is a registry that has nothing, takes uploads, and
// then stalls: with patch, in the middle of a blob PATCH (it stops reading
// the body); without, on the manifest PUT (it reads the manifest and never
// answers; blobs are said to be there already).
func stallingPushRegistry(t *testing.T, patch bool) *httptest.Server {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		hold := func() {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		switch {
		case p == "/v2/":
		case strings.Contains(p, "/manifests/") && r.Method == http.MethodPut:
			io.Copy(io.Discard, r.Body)
			hold()
		case strings.Contains(p, "/manifests/"):
			http.NotFound(w, r)
		case strings.Contains(p, "/blobs/uploads/") && r.Method == http.MethodPost:
			w.Header().Set("Location", strings.SplitAfter(p, "/uploads/")[0]+"u1")
			w.WriteHeader(http.StatusAccepted)
		case strings.Contains(p, "/blobs/uploads/") && r.Method == http.MethodPatch:
			io.CopyN(io.Discard, r.Body, 16)
			hold()
		case strings.Contains(p, "/blobs/") && !patch:
			w.Header().Set("Content-Length", "1")
			w.Header().Set("Docker-Content-Digest", strings.SplitAfter(p, "/blobs/")[1])
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return srv
}

// TestPushTimeoutFlag: --timeout bounds the push path too: a registry that
// stops reading a blob PATCH half-way, or never answers a manifest PUT,
// fails the build after --timeout (the target took a fixed minute
// before), and the error says what stalled.
func TestPushTimeoutFlag(t *testing.T) {
	for _, tc := range []struct {
		name  string
		patch bool
		want  string
	}{
		{"blob PATCH stalled half-way", true, "/blobs/uploads/u1\": no response within 500ms"},
		{"manifest PUT never answered", false, "/manifests/3.14.0-1\": no response within 500ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := stallingPushRegistry(t, tc.patch)
			reg := "oci://" + strings.TrimPrefix(srv.URL, "http://") + "/charts"
			r := runInProcess("build", filepath.Join("..", "..", "examples", "smart-proxy"), "--registry", reg, "--plain-http",
				"--timeout", "500ms", "--cache-dir", t.TempDir(), "-o", t.TempDir())
			if r.code == 0 || !strings.Contains(r.stdout+r.stderr, tc.want) {
				t.Fatalf("kbuild build --timeout 500ms against a registry that stalls a push: %s", r)
			}
		})
	}
}
