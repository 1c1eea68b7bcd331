package builder

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/sources"
)

// benchRecipes writes the recipes of bench/build/run.sh under dir: n
// local charts of 30 ConfigMap templates with 60 keys each.
func benchRecipes(tb testing.TB, dir string, n int) []string {
	tb.Helper()
	var dirs []string
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("pkg%02d", i)
		files := map[string]string{
			"chart/Chart.yaml":  "apiVersion: v2\nname: " + name + "\nversion: 1.0.0\n",
			"chart/values.yaml": "replicas: 1\n",
			"recipe.yaml": `apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: ` + name + `
  annotations: {kubepkg.dev/description: "benchmark package ` + name + `"}
spec:
  version: 1.0.0
  build: 1
  sources:
    chart: {dir: chart}
  charts:
    ` + name + `: {from: [chart]}
  package:
    rollback: {safe: true}
    variants:
      - name: default
        components: [{name: main, path: ` + name + `}]
`,
		}
		for t := 1; t <= 30; t++ {
			var b strings.Builder
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%02d-%d\ndata:\n", i, t)
			for k := 1; k <= 60; k++ {
				fmt.Fprintf(&b, "  key%d: \"value %d of template %d in chart %02d, with some text to compress\"\n", k, k, t, i)
			}
			files[fmt.Sprintf("chart/templates/cm%d.yaml", t)] = b.String()
		}
		d := filepath.Join(dir, name)
		writeChart(tb, d, files)
		dirs = append(dirs, d)
	}
	return dirs
}

// requestCounter counts the requests a registry answers, by method.
type requestCounter struct {
	mu sync.Mutex
	n  map[string]int
	h  http.Handler
}

func (c *requestCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.n[r.Method]++
	h := c.h
	c.mu.Unlock()
	h.ServeHTTP(w, r)
}

// BenchmarkBuild20 builds and pushes the 20 charts of bench/build/run.sh
// into an in-process registry, a new one each iteration. It
// reports per chart the registry requests by method and the rendering
// processes started (-benchmem: bytes allocated by kbuild's own process).
// CPU and allocation profiles: -cpuprofile, -memprofile.
func BenchmarkBuild20(b *testing.B) {
	const n = 20
	dirs := benchRecipes(b, b.TempDir(), n)
	counter := &requestCounter{n: map[string]int{}}
	srv := httptest.NewServer(counter)
	defer srv.Close()
	fetch, err := sources.New(sources.WithCacheDir(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A new registry each time: blobs pushed before would be found.
		counter.mu.Lock()
		counter.h = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
		counter.mu.Unlock()
		target, err := oci.NewRegistryTarget(fmt.Sprintf("oci://%s/bench%d", strings.TrimPrefix(srv.URL, "http://"), i), true)
		if err != nil {
			b.Fatal(err)
		}
		bld, err := New(fetch, target, WithOutputDir(b.TempDir()))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bld.Build(context.Background(), dirs); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	per := float64(b.N * n)
	for m, c := range counter.n {
		b.ReportMetric(float64(c)/per, m+"/chart")
	}
}
