package sources

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/random"

	"kbuild.dev/kbuild/recipe"
)

// TestSecondFetchUsesNoNetwork fetches one source of every networked kind,
// then fetches them again with a new Fetcher on the same cache, online and
// offline: the servers see no request at all.
func TestSecondFetchUsesNoNetwork(t *testing.T) {
	body := []byte("kind: Namespace\n")
	chart := chartArchive(t, "web", "2.0.0")
	ociChart := chartArchive(t, "api", "3.0.0")
	web, webCount := serve(t, files(map[string][]byte{
		"/ns.yaml": body, "/charts/index.yaml": repoIndex("web", "2.0.0", "web-2.0.0.tgz", sha(chart)), "/charts/web-2.0.0.tgz": chart,
	}))
	reg, regCount := startRegistry(t, nil)
	pushChart(t, reg+"/charts/api:3.0.0", ociChart)
	img, _ := random.Image(500, 1)
	d := push(t, reg+"/app:v1", img)
	repo := newGitRepo(t)

	srcs := map[string]recipe.Source{
		"url":   {URL: web.URL + "/ns.yaml", SHA256: sha(body)},
		"chart": {Chart: &recipe.ChartSource{Repository: web.URL + "/charts", Name: "web", Version: "2.0.0", Digest: sha(chart)}},
		"oci":   {Chart: &recipe.ChartSource{Repository: "oci://" + reg + "/charts", Name: "api", Version: "3.0.0", Digest: sha(ociChart)}},
		"git":   {Git: &recipe.GitSource{URL: repo.url, Commit: repo.tip, Path: "deploy"}},
		"image": {Image: &recipe.ImageSource{Ref: reg + "/app:v1@" + d.String()}},
	}
	cacheDir := t.TempDir()
	fetchAll := func(f *Fetcher) map[string]string {
		digests := map[string]string{}
		for n, src := range srcs {
			res, err := f.Fetch(context.Background(), "r", t.TempDir(), n, src, PluginInfo{})
			if err != nil {
				t.Fatalf("%s: %v", n, err)
			}
			digests[n] = res.Resolved.Digest
		}
		return digests
	}
	requests := func() int64 { return webCount.reset() + regCount.reset() + repo.count.reset() }

	first := fetchAll(withCache(t, cacheDir))
	if requests() == 0 {
		t.Fatal("the first fetch made no requests")
	}
	for _, opts := range [][]Option{nil, {WithOffline(true)}} {
		f := withCache(t, cacheDir, opts...)
		again := fetchAll(f)
		for n := range srcs {
			if again[n] != first[n] {
				t.Errorf("%s: digest %s, first %s", n, again[n], first[n])
			}
		}
		if n := requests(); n != 0 {
			t.Errorf("second fetch (options %d) made %d requests", len(opts), n)
		}
	}
}
