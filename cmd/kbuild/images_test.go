package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/internal/testenv"
)

// TestImages renders a recipe whose chart runs two images from the real
// registry, one pinned and one not, and checks the printed images: block:
// the tag resolved to its digest, the pin kept, every image once.
func TestImages(t *testing.T) {
	reg := testenv.Registry(t)
	base := strings.TrimPrefix(uniqueRepo(t, reg), "oci://")
	digests := map[string]string{}
	for _, n := range []string{"api", "worker"} {
		img, _ := random.Image(64, 1)
		ref, _ := name.NewTag(base+"/"+n+":2.0", name.Insecure)
		if err := remote.Write(ref, img); err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		digests[n] = d.String()
	}
	pinned := fmt.Sprintf("%s/worker:2.0@%s", base, digests["worker"])
	// An image only the operator deploys: declared, rendered by no chart.
	operated := fmt.Sprintf("%s/handler:2.0@%s", base, digests["worker"])
	work := t.TempDir()
	writeFiles(t, filepath.Join(work, "app"), map[string]string{
		"recipe.yaml": recipeYAML("    upstream:\n      dir: manifests\n", "",
			"    images:\n      # deployed by the operator\n      - "+operated+"\n      - \""+pinned+"\"  # the worker\n"),
		"manifests/app.yaml": fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  template:
    spec:
      initContainers: [{name: init, image: "%[1]s/api:2.0"}]
      containers:
        - {name: api, image: "%[1]s/api:2.0"}
        - name: worker
          image: "%[2]s"
          env: [{name: WORKER_IMAGE, value: "%[1]s/worker:2.0"}]
`, base, pinned),
	})
	cache := filepath.Join(work, "cache")
	r := kbuild(t, work, nil, "images", "app", "--plain-http", "--cache-dir", cache)
	if r.code != 0 {
		t.Fatalf("kbuild images: %s", r)
	}
	want := fmt.Sprintf("    images:\n      - %s/api:2.0@%s  # rendered by chart demo\n      - %s  # no chart renders it (deployed by an operator?)\n      - %s  # rendered by chart demo\n",
		base, digests["api"], operated, pinned)
	if r.stdout != want {
		t.Errorf("kbuild images printed\n%s\nwant\n%s", r.stdout, want)
	}
	// Offline, the unpinned tag cannot be resolved: say so, and print the
	// rest.
	r = kbuild(t, work, nil, "images", "app", "--offline", "--cache-dir", cache)
	if r.code == 0 || !strings.Contains(r.stderr, "image "+base+"/api:2.0: looking up its digest needs the network") ||
		!strings.Contains(r.stderr, "\nrun kbuild images app --write where their registries can be reached") ||
		!strings.Contains(r.stdout, "- "+base+"/api:2.0  # TODO: pin") || !strings.Contains(r.stdout, operated) {
		t.Errorf("kbuild images --offline: %s", r)
	}
	// --write pins in place and keeps the comments and the operator's image.
	r = kbuild(t, work, nil, "images", "app", "--write", "--plain-http", "--cache-dir", cache)
	if r.code != 0 {
		t.Fatalf("kbuild images --write: %s", r)
	}
	data, _ := os.ReadFile(filepath.Join(work, "app", "recipe.yaml"))
	wantBlock := "    images:\n      # deployed by the operator\n      - " + operated + "\n      - \"" + pinned + "\"  # the worker\n      - " + base + "/api:2.0@" + digests["api"] + "  # rendered by chart demo\n"
	if !strings.Contains(string(data), wantBlock) {
		t.Errorf("recipe after --write:\n%s\nwant the block\n%s", data, wantBlock)
	}
	if r := kbuild(t, work, nil, "validate", "--plain-http", "--cache-dir", cache, "app"); r.code != 0 {
		t.Errorf("validate after --write: %s", r)
	}
}
