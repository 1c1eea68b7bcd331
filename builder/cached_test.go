package builder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/sources"
)

// buildDirs builds the recipes under args into out and its local OCI
// layout out/oci, as `kbuild build ARGS -o OUT` does, with the sources
// cached in cache; offline uses only the cache.
func buildDirs(t *testing.T, cache, out string, offline bool, args []string, opts ...Option) []*Result {
	t.Helper()
	dirs, err := FindRecipes(args)
	if err != nil {
		t.Fatal(err)
	}
	fetch, err := sources.New(sources.WithCacheDir(cache), sources.WithOffline(offline))
	if err != nil {
		t.Fatal(err)
	}
	target, err := oci.NewLayoutTarget(filepath.Join(out, "oci"), "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(fetch, target, append([]Option{WithOutputDir(out), WithUnpinnedImages(offline)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	results, err := b.Build(context.Background(), dirs)
	if err != nil {
		t.Fatalf("Build %v: %v", args, err)
	}
	return results
}

// TestCachedBuildNoNetwork builds 100 recipes whose sources are served on
// loopback, then builds them again with the same cache: the second build
// must make no request at all. Wall times are logged for bench/README.md
// (bench/cached/run.sh prints them), never asserted.
func TestCachedBuildNoNetwork(t *testing.T) {
	n := 100
	if testing.Short() {
		n = 10
	}
	var requests atomic.Int64
	manifests := map[string][]byte{}
	for i := 0; i < n; i++ {
		manifests[fmt.Sprintf("/m%03d.yaml", i)] = []byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%03d\ndata:\n  payload: %q\n", i, strings.Repeat("x", 2000)))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if b, ok := manifests[r.URL.Path]; ok {
			w.Write(b)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()

	work := t.TempDir()
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("/m%03d.yaml", i)
		sum := sha256.Sum256(manifests[p])
		writeChart(t, filepath.Join(work, "recipes", fmt.Sprintf("pkg%03d", i)), map[string]string{
			RecipeFile: fmt.Sprintf(`apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: pkg%03d
  annotations: {kubepkg.dev/description: "package %d"}
spec:
  version: 1.0.%d
  build: 1
  sources:
    upstream: {url: "%s%s", sha256: "%s"}
  charts:
    main: {from: [upstream]}
  package:
    rollback: {safe: true}
    variants:
      - name: default
        components: [{name: main, path: main}]
`, i, i, i, srv.URL, p, hex.EncodeToString(sum[:])),
		})
	}
	cache := filepath.Join(work, "cache")
	recipes := []string{filepath.Join(work, "recipes") + "/"}
	build := func(out string, offline bool) time.Duration {
		start := time.Now()
		if res := buildDirs(t, cache, filepath.Join(work, out), offline, recipes); len(res) != n {
			t.Fatalf("%s: %d results, want %d", out, len(res), n)
		}
		return time.Since(start)
	}
	first := build("dist1", false)
	if got := requests.Load(); got != int64(n) {
		t.Errorf("first build made %d requests, want %d (one per source)", got, n)
	}
	requests.Store(0)
	second := build("dist2", false)
	if got := requests.Load(); got != 0 {
		t.Errorf("second build with everything cached made %d requests, want 0", got)
	}
	srv.Close()
	offline := build("dist3", true)
	for _, d := range []string{"dist2", "dist3"} {
		a, _ := os.ReadFile(filepath.Join(work, "dist1", "pkg042-1.0.42-1.yaml"))
		b, _ := os.ReadFile(filepath.Join(work, d, "pkg042-1.0.42-1.yaml"))
		if n > 42 && string(a) != string(b) {
			t.Errorf("%s differs from the first build", d)
		}
	}
	t.Logf("%d recipes: first build %.2fs, second (cached) %.2fs, offline %.2fs", n, first.Seconds(), second.Seconds(), offline.Seconds())
}
