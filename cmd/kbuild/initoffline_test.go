package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/chart"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/oci"
)

// TestInitOffline drafts a recipe online from an oci:// chart in ggcr's
// in-process registry and from --manifest URLs on an httptest server,
// closes both, and drafts it again with --offline from the cache the first
// run filled: the same source pins, the image written to pin later, exit
// 0 with the warning. A source nothing cached fails naming every such
// source, sorted, with the command that caches them, and leaves no
// directory behind.
func TestInitOffline(t *testing.T) {
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	host := strings.TrimPrefix(reg.URL, "http://")
	img, _ := random.Image(128, 1)
	imgTag, _ := name.NewTag(host+"/app:1.0", name.Insecure)
	if err := remote.Write(imgTag, img); err != nil {
		t.Fatal(err)
	}
	imgDigest, _ := img.Digest()

	chartDir := t.TempDir()
	writeFiles(t, chartDir, map[string]string{
		"Chart.yaml":            "apiVersion: v2\nname: app\nversion: 2.1.0\ndescription: An app for tests\n",
		"templates/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n  template:\n    spec:\n      containers:\n        - {name: app, image: " + host + "/app:1.0}\n",
	})
	archive, err := builder.Pack(chartDir, "app", "2.1.0", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	target, _ := oci.NewRegistryTarget("oci://"+host+"/charts", true)
	ci, _ := oci.ChartImage(archive.Data, &chart.Metadata{APIVersion: "v2", Name: "app", Version: "2.1.0", Description: "An app for tests"}, time.Unix(0, 0))
	if err := target.Push(context.Background(), "app", "2.1.0", ci); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n  template:\n    spec:\n      containers:\n        - {name: app, image: %s/app:1.0}\n", host)
	crds := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec: {group: example.com, names: {kind: Widget, plural: widgets}, scope: Namespaced, versions: []}\n"
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/release/app.yaml":
			io.WriteString(w, manifest)
		case "/release/crds.yaml":
			io.WriteString(w, crds)
		default:
			http.NotFound(w, r)
		}
	}))
	chartArg := "oci://" + host + "/charts/app@2.1.0"
	appURL, crdsURL := web.URL+"/release/app.yaml", web.URL+"/release/crds.yaml"

	work := t.TempDir()
	cases := []struct {
		name  string
		args  []string
		pins  []string // in the draft, online and offline
		cache string   // cache directory of the online run
	}{
		{name: "oci chart", args: []string{"--chart", chartArg},
			pins: []string{`repository: "oci://` + host + `/charts"`, `digest: "` + archive.Digest + `"`}},
		{name: "manifests", args: []string{"--manifest", appURL, "--manifest", crdsURL, "--version", "3.0.0"},
			pins: []string{`url: "` + appURL + `"`, `sha256: "` + sha([]byte(manifest)) + `"`, `sha256: "` + sha([]byte(crds)) + `"`, "- widgets.example.com"}},
	}
	for i := range cases {
		tc := &cases[i]
		tc.cache = filepath.Join(work, "cache-"+strings.ReplaceAll(tc.name, " ", "-"))
		r := kbuild(t, work, nil, append([]string{"init", "online-" + strings.ReplaceAll(tc.name, " ", "-"), "--name", "app", "--plain-http", "--cache-dir", tc.cache}, tc.args...)...)
		data, _ := os.ReadFile(filepath.Join(work, "online-"+strings.ReplaceAll(tc.name, " ", "-"), "recipe.yaml"))
		if r.code != 0 || !strings.Contains(string(data), "- "+host+"/app:1.0@"+imgDigest.String()) {
			t.Fatalf("%s: online init: %s\n%s", tc.name, r, data)
		}
	}
	web.Close()
	reg.Close()

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := "offline-" + strings.ReplaceAll(tc.name, " ", "-")
			r := kbuild(t, work, nil, append([]string{"init", dir, "--name", "app", "--offline", "--cache-dir", tc.cache}, tc.args...)...)
			if r.code != 0 || !strings.Contains(r.stderr, "warning: 1 images are not pinned") || !strings.Contains(r.stderr, "kbuild images "+dir+" --write") {
				t.Fatalf("init --offline: %s", r)
			}
			data, _ := os.ReadFile(filepath.Join(work, dir, "recipe.yaml"))
			for _, w := range append(tc.pins, "      - "+host+"/app:1.0  # TODO: pin") {
				if !strings.Contains(string(data), w) {
					t.Errorf("offline draft lacks %q:\n%s", w, data)
				}
			}
		})
	}

	// Nothing cached: every source is named, sorted, and nothing is left.
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"oci chart not cached", []string{"--chart", chartArg}, []string{
			"source upstream: offline: chart app 2.1.0 from oci://" + host + "/charts is not in the cache"}},
		{"manifests not cached", []string{"--manifest", appURL, "--manifest", crdsURL, "--version", "3.0.0"}, []string{
			"source app: offline: " + appURL + " is not in the cache", "source crds: offline: " + crdsURL + " is not in the cache"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := kbuild(t, work, nil, append([]string{"init", "missing", "--offline", "--cache-dir", t.TempDir()}, tc.args...)...)
			if r.code == 0 {
				t.Fatalf("init --offline without a cache succeeded: %s", r)
			}
			last := -1
			for _, w := range tc.want {
				at := strings.Index(r.stderr, w)
				if at < 0 || at < last {
					t.Errorf("error lacks %q, or names it out of order: %s", w, r.stderr)
				}
				last = at
			}
			if n := strings.Count(r.stderr, "pin it once without --offline (kbuild init)"); n != len(tc.want) {
				t.Errorf("the command that caches a source is given %d times, want %d: %s", n, len(tc.want), r.stderr)
			}
			if _, err := os.Stat(filepath.Join(work, "missing")); err == nil {
				t.Errorf("init --offline left the directory missing behind")
			}
		})
	}

	// A file downloaded by other means, seeded with cache add --url, pins
	// its url source offline; without --url nothing says where it came
	// from, and the error says how to record it.
	t.Run("cache add --url", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "app.yaml")
		if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		bare, seeded := t.TempDir(), t.TempDir()
		if r := kbuild(t, work, nil, "cache", "add", "--cache-dir", bare, file); r.code != 0 {
			t.Fatalf("cache add: %s", r)
		}
		r := kbuild(t, work, nil, "init", "bare", "--name", "app", "--offline", "--cache-dir", bare, "--manifest", appURL, "--version", "3.0.0")
		if r.code == 0 || !strings.Contains(r.stderr, "kbuild cache add --url URL FILE") {
			t.Fatalf("init --offline from a cache add without --url: %s", r)
		}
		if r := kbuild(t, work, nil, "cache", "add", "--cache-dir", seeded, "--url", appURL, file); r.code != 0 || !strings.Contains(r.stdout, sha([]byte(manifest))) {
			t.Fatalf("cache add --url: %s", r)
		}
		r = kbuild(t, work, nil, "init", "seeded", "--name", "app", "--offline", "--cache-dir", seeded, "--manifest", appURL, "--version", "3.0.0")
		data, _ := os.ReadFile(filepath.Join(work, "seeded", "recipe.yaml"))
		if r.code != 0 || !strings.Contains(string(data), `sha256: "`+sha([]byte(manifest))+`"`) {
			t.Fatalf("init --offline from cache add --url: %s\n%s", r, data)
		}
		if r := kbuild(t, work, nil, "cache", "add", "--cache-dir", seeded, "--url", appURL, file, file); r.code != 2 {
			t.Errorf("cache add --url with two files: %s, want a usage error", r)
		}
		if r := kbuild(t, work, nil, "cache", "add", "--cache-dir", seeded, "--url", "ftp://example.com/x", file); r.code == 0 || !strings.Contains(r.stderr, "is not an http(s) URL") {
			t.Errorf("cache add --url ftp://: %s", r)
		}
	})
}
