package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/chart"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/internal/testenv"
)

// TestInit drafts recipes from a chart in an HTTP repository, a chart in
// the real registry and plain manifests, all served on loopback; each
// draft must pin everything and validate and build as is.
func TestInit(t *testing.T) {
	reg := testenv.Registry(t)
	base := strings.TrimPrefix(uniqueRepo(t, reg), "oci://")

	img, _ := random.Image(128, 1)
	imgRef, _ := name.NewTag(base+"/app:1.0", name.Insecure)
	if err := remote.Write(imgRef, img); err != nil {
		t.Fatal(err)
	}
	imgDigest, _ := img.Digest()
	// A tagless reference means :latest.
	latest, _ := name.NewTag(base+"/tools:latest", name.Insecure)
	if err := remote.Write(latest, img); err != nil {
		t.Fatal(err)
	}

	chartDir := t.TempDir()
	writeFiles(t, chartDir, map[string]string{
		"Chart.yaml":            "apiVersion: v2\nname: app\nversion: 2.1.0\ndescription: An app for tests\nhome: https://app.example.com\n",
		"values.yaml":           fmt.Sprintf("image: %s/app:1.0\n", base),
		"templates/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n  template:\n    spec:\n      containers:\n        - {name: app, image: \"{{ .Values.image }}\"}\n        - {name: tools, image: " + base + "/tools}\n",
		"crds/widgets.yaml":     "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec: {group: example.com, names: {kind: Widget, plural: widgets}, scope: Namespaced, versions: []}\n",
	})
	archive, err := builder.Pack(chartDir, "app", "2.1.0", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: app}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app, namespace: app}\nspec:\n  template:\n    spec:\n      containers:\n        - {name: app, image: %s/app:1.0}\n", base)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/charts/index.yaml":
			fmt.Fprintf(w, "apiVersion: v1\nentries:\n  app:\n    - name: app\n      version: 2.1.0\n      urls: [app-2.1.0.tgz]\n      digest: %s\n", strings.TrimPrefix(archive.Digest, "sha256:"))
		case "/charts/app-2.1.0.tgz":
			w.Write(archive.Data)
		case "/release/app.yaml":
			w.Write([]byte(manifest))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	// The same chart in the registry, as helm push stores it.
	target, _ := oci.NewRegistryTarget("oci://"+base+"/charts", true)
	ci, _ := oci.ChartImage(archive.Data, &chart.Metadata{APIVersion: "v2", Name: "app", Version: "2.1.0", Description: "An app for tests"}, time.Unix(0, 0))
	if err := target.Push(context.Background(), "app", "2.1.0", ci); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"http chart", []string{"--chart", srv.URL + "/charts/app@2.1.0"}, []string{
			"name: app\n", `version: "2.1.0"`, `digest: "` + archive.Digest + `"`, "- widgets.example.com", `kubepkg.dev/home: "https://app.example.com"`,
			"- " + base + "/app:1.0@" + imgDigest.String(), "- " + base + "/tools:latest@" + imgDigest.String(), "rollback: {safe: false}", "namespace: app"}},
		{"oci chart", []string{"--chart", "oci://" + base + "/charts/app@2.1.0", "--name", "app-oci"}, []string{
			"name: app-oci\n", `digest: "` + archive.Digest + `"`, `repository: "oci://` + base + `/charts"`}},
		{"manifests", []string{"--manifest", srv.URL + "/release/app.yaml", "--version", "v3.0.0"}, []string{
			`version: "3.0.0"`, "url: \"" + srv.URL + "/release/app.yaml\"", "sha256: \"" + sha([]byte(manifest)) + "\"", "- kind: Namespace", "- " + base + "/app:1.0@" + imgDigest.String()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			cache := filepath.Join(work, "cache")
			r := kbuild(t, work, nil, append([]string{"init", "rec", "--plain-http", "--cache-dir", cache}, tc.args...)...)
			if r.code != 0 || !strings.Contains(r.stdout, "wrote rec/recipe.yaml; review it, then run: kbuild validate rec") {
				t.Fatalf("init: %s", r)
			}
			data, _ := os.ReadFile(filepath.Join(work, "rec", "recipe.yaml"))
			for _, w := range tc.want {
				if !strings.Contains(string(data), w) {
					t.Errorf("recipe lacks %q:\n%s", w, data)
				}
			}
			if r := kbuild(t, work, nil, "validate", "--plain-http", "--cache-dir", cache, "rec"); r.code != 0 || strings.Contains(r.stdout, "error:") {
				t.Errorf("validate the draft: %s", r)
			}
			if r := kbuild(t, work, nil, "build", "--plain-http", "--cache-dir", cache, "rec"); r.code != 0 {
				t.Errorf("build the draft: %s", r)
			}
			if r := kbuild(t, work, nil, append([]string{"init", "rec", "--cache-dir", cache}, tc.args...)...); r.code == 0 || !strings.Contains(r.stderr, "already exists") {
				t.Errorf("init over an existing recipe: %s", r)
			}
		})
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for n, body := range files {
		p := filepath.Join(dir, n)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// recordingProxy is an HTTP proxy that records every request and refuses
// them all, as a network without registry access does.
type recordingProxy struct {
	mu   sync.Mutex
	seen []string // "CONNECT host:port" or "GET http://host/path"
}

func (p *recordingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if r.Method == http.MethodConnect {
		p.seen = append(p.seen, "CONNECT "+r.Host)
	} else {
		p.seen = append(p.seen, r.Method+" "+r.URL.String())
	}
	p.mu.Unlock()
	http.Error(w, "no route to the internet", http.StatusBadGateway)
}

func (p *recordingProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

// TestInitWithoutRegistryAccess drafts a recipe for a chart whose images
// live on public registries that cannot be reached (every request goes to a
// recording proxy that refuses it): init still writes the draft, with the
// images marked to pin, warns naming them and the command that pins them,
// and exits 0; validate then names them. With --plain-http (for the
// loopback chart repository) no request to a public registry is plain HTTP.
func TestInitWithoutRegistryAccess(t *testing.T) {
	chartDir := t.TempDir()
	writeFiles(t, chartDir, map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: tools\nversion: 0.4.0\ndescription: Tools with a tagless image\n",
		"values.yaml": "image: giantswarm/tiny-tools\n",
		"templates/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: tools}\nspec:\n  containers:\n" +
			"    - {name: tools, image: \"{{ .Values.image }}\"}\n    - {name: web, image: nginx:1.27}\n",
	})
	archive, err := builder.Pack(chartDir, "tools", "0.4.0", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	repo := serveChartRepo(t, map[string]*builder.Archive{"tools": archive}, nil)

	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{name: "registries unreachable"},
		{name: "plain-http for the loopback repository", flags: []string{"--plain-http"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy := &recordingProxy{}
			ps := httptest.NewServer(proxy)
			defer ps.Close()
			env := []string{"HTTPS_PROXY=" + ps.URL, "HTTP_PROXY=" + ps.URL, "NO_PROXY=", "DOCKER_CONFIG=" + t.TempDir()}
			work := t.TempDir()
			cache := filepath.Join(work, "cache")
			args := append([]string{"init", "rec", "--cache-dir", cache, "--chart", repo.URL + "/tools@0.4.0"}, tc.flags...)
			r := kbuild(t, work, env, args...)
			if r.code != 0 {
				t.Fatalf("init: %s", r)
			}
			for _, w := range []string{
				"warning: 2 images are not pinned",
				"docker.io/giantswarm/tiny-tools:latest",
				"docker.io/library/nginx:1.27",
				"kbuild images rec --write",
			} {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("init's warning lacks %q: %s", w, r.stderr)
				}
			}
			data, err := os.ReadFile(filepath.Join(work, "rec", "recipe.yaml"))
			if err != nil {
				t.Fatalf("no draft: %v", err)
			}
			for _, w := range []string{
				"      - docker.io/giantswarm/tiny-tools:latest  # TODO: pin",
				"      - docker.io/library/nginx:1.27  # TODO: pin",
				`digest: "` + archive.Digest + `"`,
			} {
				if !strings.Contains(string(data), w) {
					t.Errorf("draft lacks %q:\n%s", w, data)
				}
			}
			// kbuild images looks the same digests up the same way.
			r = kbuild(t, work, env, append([]string{"images", "rec", "--cache-dir", cache}, tc.flags...)...)
			if r.code != 1 || !strings.Contains(r.stderr, "2 images are not pinned") || !strings.Contains(r.stdout, "docker.io/library/nginx:1.27  # TODO: pin") {
				t.Errorf("images without registry access: %s", r)
			}
			reqs := proxy.requests()
			connected := false
			for _, req := range reqs {
				if !strings.HasPrefix(req, "CONNECT ") {
					t.Errorf("plain HTTP request to a public registry: %s", req)
				}
				connected = connected || strings.HasPrefix(req, "CONNECT index.docker.io:443")
			}
			if !connected {
				t.Errorf("no HTTPS lookup of Docker Hub went through the proxy: %q", reqs)
			}
			// Offline, from the cache the first init filled: the same draft.
			r = kbuild(t, work, env, append([]string{"init", "rec-offline", "--offline", "--name", "tools", "--cache-dir", cache, "--chart", repo.URL + "/tools@0.4.0"}, tc.flags...)...)
			again, _ := os.ReadFile(filepath.Join(work, "rec-offline", "recipe.yaml"))
			if r.code != 0 || string(again) != string(data) || !strings.Contains(r.stderr, "warning: 2 images are not pinned") {
				t.Errorf("init --offline: %s\ndraft:\n%s", r, again)
			}
			r = kbuild(t, work, env, "validate", "--offline", "--cache-dir", cache, "rec")
			for _, w := range []string{`image "docker.io/giantswarm/tiny-tools:latest" is not pinned by digest`, `image "docker.io/library/nginx:1.27" is not pinned by digest`} {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("validate does not name the image to pin (%s): %s", w, r)
				}
			}
		})
	}
}
