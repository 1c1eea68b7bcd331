package sources

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"kbuild.dev/kbuild/recipe"
)

// TestPinOfflineFromRecordedPins pins url and OCI chart sources offline,
// from what an earlier online run recorded in the cache: a Pin, a Fetch of
// a recipe that pins them, or `kbuild cache add` followed by an offline
// Fetch. The online runs reach an httptest server and ggcr's in-process
// registry; both are closed before the offline Pins, which must not need
// them. What nothing recorded fails naming the source and the command.
func TestPinOfflineFromRecordedPins(t *testing.T) {
	manifest := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n")
	archive := chartArchive(t, "app", "1.2.3+build.4")
	web := httptest.NewServer(files(map[string][]byte{"/release/app.yaml": manifest}))
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	host := strings.TrimPrefix(reg.URL, "http://")
	pushChart(t, host+"/charts/app:1.2.3_build.4", archive)

	urlSrc := recipe.Source{URL: web.URL + "/release/app.yaml"}
	ociSrc := recipe.Source{Chart: &recipe.ChartSource{Repository: "oci://" + host + "/charts", Name: "app", Version: "1.2.3+build.4"}}
	pinned := func(s recipe.Source) recipe.Source {
		if s.URL != "" {
			s.SHA256 = strings.TrimPrefix(sha(manifest), "sha256:")
			return s
		}
		c := *s.Chart
		c.Digest = sha(archive)
		s.Chart = &c
		return s
	}
	ctx := context.Background()
	pin := func(t *testing.T, f *Fetcher, s recipe.Source) {
		if _, err := f.Pin(ctx, s); err != nil {
			t.Fatalf("online Pin: %v", err)
		}
	}
	fetch := func(t *testing.T, f *Fetcher, s recipe.Source) {
		if _, err := f.Fetch(ctx, t.TempDir(), t.TempDir(), "upstream", pinned(s), PluginInfo{}); err != nil {
			t.Fatalf("Fetch: %v", err)
		}
	}
	cacheAdd := func(body []byte) func(*testing.T, *Fetcher, recipe.Source) {
		return func(t *testing.T, f *Fetcher, s recipe.Source) {
			p := filepath.Join(t.TempDir(), "file")
			os.WriteFile(p, body, 0o644)
			if _, err := f.Add(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	both := func(first, then func(*testing.T, *Fetcher, recipe.Source)) func(*testing.T, *Fetcher, recipe.Source) {
		return func(t *testing.T, f *Fetcher, s recipe.Source) { first(t, f, s); then(t, f, s) }
	}
	removeBlob := func(d string) func(*testing.T, *Fetcher, recipe.Source) {
		return func(t *testing.T, f *Fetcher, s recipe.Source) { os.Remove(f.cache.blobPath(d)) }
	}

	var offline []func() // run once the servers are closed
	for _, tc := range []struct {
		name    string
		src     recipe.Source
		online  func(*testing.T, *Fetcher, recipe.Source) // with the servers up
		offline func(*testing.T, *Fetcher, recipe.Source) // before the offline Pin
		errMsg  []string                                  // empty: Pin succeeds with the pin
	}{
		{name: "url pinned online", src: urlSrc, online: pin},
		{name: "url fetched for a recipe", src: urlSrc, online: fetch},
		{name: "url with credentials pinned online", src: recipe.Source{URL: strings.Replace(web.URL, "://", "://user:s3cret@", 1) + "/release/app.yaml"}, online: pin},
		{name: "oci chart pinned online", src: ociSrc, online: pin},
		{name: "oci chart fetched for a recipe", src: ociSrc, online: fetch},
		{name: "oci chart added to the cache, then fetched offline", src: ociSrc, offline: both(cacheAdd(archive), fetch)},
		{name: "url added to the cache, then fetched offline", src: urlSrc, offline: both(cacheAdd(manifest), fetch)},
		{name: "url never cached", src: urlSrc,
			errMsg: []string{web.URL + "/release/app.yaml is not in the cache", "(nothing records its digest)"}},
		{name: "oci chart never cached", src: ociSrc,
			errMsg: []string{"chart app 1.2.3+build.4 from oci://" + host + "/charts is not in the cache", "(nothing records its digest)"}},
		{name: "url only added to the cache", src: urlSrc, offline: cacheAdd(manifest),
			errMsg: []string{web.URL + "/release/app.yaml is not in the cache", "(nothing records its digest)"}},
		{name: "oci chart pinned, then its blob removed", src: ociSrc, online: pin, offline: removeBlob(sha(archive)),
			errMsg: []string{"chart app 1.2.3+build.4 from oci://" + host + "/charts is not in the cache"}},
	} {
		cache := t.TempDir() // outlives the subtests
		t.Run(tc.name+"/online", func(t *testing.T) {
			if tc.online != nil {
				tc.online(t, withCache(t, cache, WithPlainHTTP(true)), tc.src)
			}
		})
		offline = append(offline, func() {
			t.Run(tc.name+"/offline", func(t *testing.T) {
				f := withCache(t, cache, WithOffline(true))
				if tc.offline != nil {
					tc.offline(t, f, tc.src)
				}
				got, err := f.Pin(ctx, tc.src)
				refs, _ := filepath.Glob(filepath.Join(cache, "refs", "*", "*"))
				for _, r := range refs {
					if b, _ := os.ReadFile(r); strings.Contains(string(b), "s3cret") {
						t.Errorf("cache reference %s holds the password: %s", r, b)
					}
				}
				if len(tc.errMsg) > 0 {
					wantErr(t, err, ErrOffline, tc.errMsg...)
					wantNotCached(t, err, NotCachedError{Pinning: true, Unrecorded: true})
					return
				}
				if want := pinned(tc.src); err != nil || got.SHA256 != want.SHA256 || (got.Chart != nil && got.Chart.Digest != want.Chart.Digest) {
					t.Fatalf("offline Pin = %+v, %v; want %+v", got, err, want)
				}
			})
		})
	}
	web.Close()
	reg.Close()
	for _, run := range offline {
		run()
	}
}
