package sources

import (
	"context"
	"testing"

	"kbuild.dev/kbuild/recipe"
)

// TestPinChartOffline pins a chart from an HTTP repository online, then
// offline from the same cache (the cached index.yaml and archive), and
// offline from an empty cache, which fails naming the chart; offline, a
// url never downloaded and a git source are refused.
func TestPinChartOffline(t *testing.T) {
	archive := chartArchive(t, "app", "1.2.0")
	srv, count := serve(t, files(map[string][]byte{"/index.yaml": repoIndex("app", "1.2.0", "app-1.2.0.tgz", sha(archive)), "/app-1.2.0.tgz": archive}))
	src := recipe.Source{Chart: &recipe.ChartSource{Repository: srv.URL, Name: "app", Version: "1.2.0"}}
	cacheDir := t.TempDir()
	online, err := withCache(t, cacheDir).Pin(context.Background(), src)
	if err != nil || online.Chart.Digest != sha(archive) {
		t.Fatalf("Pin online = %+v, %v; want digest %s", online.Chart, err, sha(archive))
	}
	count.reset()
	offline, err := withCache(t, cacheDir, WithOffline(true)).Pin(context.Background(), src)
	if err != nil || offline.Chart.Digest != online.Chart.Digest {
		t.Fatalf("Pin offline = %+v, %v; want digest %s", offline.Chart, err, online.Chart.Digest)
	}
	if n := count.reset(); n != 0 {
		t.Errorf("offline Pin made %d requests", n)
	}
	_, err = newFetcher(t, WithOffline(true)).Pin(context.Background(), src)
	wantErr(t, err, ErrOffline, "chart repository index "+srv.URL+"/index.yaml is not in the cache")
	wantNotCached(t, err, NotCachedError{})
	_, err = withCache(t, cacheDir, WithOffline(true)).Pin(context.Background(), recipe.Source{URL: srv.URL + "/app-1.2.0.tgz"})
	wantErr(t, err, ErrOffline, srv.URL+"/app-1.2.0.tgz is not in the cache", "nothing records its digest")
	wantNotCached(t, err, NotCachedError{Pinning: true, Unrecorded: true})
	_, err = withCache(t, cacheDir, WithOffline(true)).Pin(context.Background(), recipe.Source{Git: &recipe.GitSource{URL: srv.URL + "/repo.git"}})
	wantErr(t, err, ErrOffline, "pinning needs the network")
}
