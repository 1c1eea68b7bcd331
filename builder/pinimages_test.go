package builder

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/sources"
)

// TestPinImages runs kbuild images' action offline on a recipe whose
// chart runs one pinned image and one tag: the tag cannot be resolved, so
// the block is written (the tag marked TODO) and only then is it an error
// naming the image; without write nothing changes.
func TestPinImages(t *testing.T) {
	const pinned = "example.com/worker:2.0@sha256:2222222222222222222222222222222222222222222222222222222222222222"
	dir := filepath.Join(t.TempDir(), "app")
	for name, data := range map[string]string{
		"recipe.yaml": `apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: demo
  annotations:
    kubepkg.dev/description: demo
spec:
  version: 1.0.0
  build: 1
  sources:
    upstream:
      dir: manifests
  charts:
    demo:
      from: [upstream]
  package:
    rollback: {safe: true}
    images:
      - ` + pinned + `
    variants:
      - name: default
        components:
          - {name: demo, path: demo}
`,
		"manifests/app.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n  template:\n    spec:\n      containers:\n        - {name: api, image: \"example.com/api:2.0\"}\n        - {name: worker, image: \"" + pinned + "\"}\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fetch, err := sources.New(sources.WithCacheDir(t.TempDir()), sources.WithOffline(true))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(fetch, nil, WithWorkDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, RecipeFile))
	res, err := b.PinImages(context.Background(), dir, false)
	after, _ := os.ReadFile(filepath.Join(dir, RecipeFile))
	if res == nil || res.Written || len(res.Entries) != 2 || err == nil || !strings.Contains(err.Error(), "1 images are not pinned") || string(after) != string(before) {
		t.Fatalf("PinImages(write=false) = %+v, %v; want two entries, the tag unpinned, the recipe unchanged", res, err)
	}
	res, err = b.PinImages(context.Background(), dir, true)
	after, _ = os.ReadFile(filepath.Join(dir, RecipeFile))
	if res == nil || !res.Written || err == nil || !strings.Contains(string(after), "example.com/api:2.0  # TODO: pin") {
		t.Fatalf("PinImages(write=true) = %+v, %v, recipe:\n%s\nwant the block written, the tag marked, then the error", res, err, after)
	}
}
