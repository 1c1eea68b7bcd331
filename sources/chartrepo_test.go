package sources

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/spec"
)

// repoIndex returns a one-entry index.yaml; digest may be empty.
func repoIndex(name, version, url, digest string) []byte {
	d := ""
	if digest != "" {
		d = "    digest: " + strings.TrimPrefix(digest, "sha256:") + "\n"
	}
	return []byte(fmt.Sprintf("apiVersion: v1\nentries:\n  %s:\n  - name: %s\n    version: %s\n%s    urls:\n    - %s\n", name, name, version, d, url))
}

// chartRepo serves an index.yaml with an ETag and the archives by path,
// counting index downloads (200) and revalidations (304).
type chartRepo struct {
	mu         sync.Mutex
	files      map[string][]byte
	downloads  map[string]int
	notChanged int
}

func (c *chartRepo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	b, ok := c.files[r.URL.Path]
	c.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("ETag", `"`+sha(b)+`"`)
	rec := &statusRecorder{ResponseWriter: w}
	files(map[string][]byte{r.URL.Path: b}).ServeHTTP(rec, r)
	c.mu.Lock()
	defer c.mu.Unlock()
	if rec.code == http.StatusNotModified {
		c.notChanged++
	} else {
		c.downloads[r.URL.Path]++
	}
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) { s.code = code; s.ResponseWriter.WriteHeader(code) }

func TestFetchRepoChart(t *testing.T) {
	redis := chartArchive(t, "redis", "7.2.4")
	nginx := chartArchive(t, "nginx", "1.0.0+build.1")
	repo := &chartRepo{downloads: map[string]int{}}
	srv, count := serve(t, repo)
	repo.files = map[string][]byte{
		"/charts/index.yaml": []byte(fmt.Sprintf(`apiVersion: v1
entries:
  redis:
  - name: redis
    version: 7.2.4
    digest: %s
    urls: [redis-7.2.4.tgz]
  nginx:
  - name: nginx
    version: 1.0.0+build.1
    urls: ["%s/archives/nginx.tgz"]
`, strings.TrimPrefix(sha(redis), "sha256:"), srv.URL)),
		"/charts/redis-7.2.4.tgz": redis,
		"/archives/nginx.tgz":     nginx,
	}
	cacheDir := t.TempDir()
	fetch := func(t *testing.T, c recipe.ChartSource, opts ...Option) (*Result, error) {
		return withCache(t, cacheDir, opts...).Fetch(context.Background(), "r", t.TempDir(), "up", recipe.Source{Chart: &c}, PluginInfo{})
	}
	redisSrc := recipe.ChartSource{Repository: srv.URL + "/charts/", Name: "redis", Version: "7.2.4", Digest: sha(redis)}
	nginxSrc := recipe.ChartSource{Repository: srv.URL + "/charts", Name: "nginx", Version: "1.0.0+build.1", Digest: sha(nginx)}

	t.Run("relative archive URL", func(t *testing.T) {
		res, err := fetch(t, redisSrc)
		if err != nil {
			t.Fatal(err)
		}
		want := spec.ResolvedSource{Name: "up", Kind: "chart", Origin: srv.URL + "/charts/redis@7.2.4", Digest: sha(redis)}
		if res.Resolved != want {
			t.Errorf("Resolved = %+v, want %+v", res.Resolved, want)
		}
		if _, err := os.Stat(filepath.Join(res.Path, "Chart.yaml")); err != nil || filepath.Base(res.Path) != "redis" {
			t.Errorf("Result.Path %s has no Chart.yaml at its root", res.Path)
		}
		if repo.downloads["/charts/index.yaml"] != 1 {
			t.Errorf("index downloaded %d times, want 1", repo.downloads["/charts/index.yaml"])
		}
	})
	t.Run("absolute archive URL, index revalidated not downloaded", func(t *testing.T) {
		if _, err := fetch(t, nginxSrc); err != nil {
			t.Fatal(err)
		}
		if repo.downloads["/charts/index.yaml"] != 1 || repo.notChanged != 1 {
			t.Errorf("index downloads %d, not-modified answers %d; want 1 and 1", repo.downloads["/charts/index.yaml"], repo.notChanged)
		}
	})
	t.Run("cached archive: no request at all", func(t *testing.T) {
		count.reset()
		if _, err := fetch(t, redisSrc); err != nil {
			t.Fatal(err)
		}
		if _, err := fetch(t, nginxSrc, WithOffline(true)); err != nil {
			t.Fatal(err)
		}
		if n := count.reset(); n != 0 {
			t.Errorf("%d requests for cached charts", n)
		}
	})
	t.Run("changed index is downloaded again", func(t *testing.T) {
		repo.mu.Lock()
		repo.files["/charts/index.yaml"] = append(repo.files["/charts/index.yaml"], []byte("# changed\n")...)
		repo.mu.Unlock()
		other := chartArchive(t, "redis", "7.2.5")
		_, err := fetch(t, recipe.ChartSource{Repository: srv.URL + "/charts", Name: "redis", Version: "7.2.5", Digest: sha(other)})
		wantErr(t, err, nil, "has no version \"7.2.5\" of chart \"redis\" (it lists \"7.2.4\")")
		if repo.downloads["/charts/index.yaml"] != 2 {
			t.Errorf("index downloads %d, want 2", repo.downloads["/charts/index.yaml"])
		}
	})
	t.Run("unknown chart", func(t *testing.T) {
		_, err := fetch(t, recipe.ChartSource{Repository: srv.URL + "/charts", Name: "nope", Version: "1.0.0", Digest: sha(nil)})
		wantErr(t, err, nil, `has no chart "nope"`)
	})
	t.Run("offline and not cached", func(t *testing.T) {
		_, err := fetch(t, recipe.ChartSource{Repository: srv.URL + "/charts", Name: "nope", Version: "1.0.0", Digest: sha(nil)}, WithOffline(true))
		wantErr(t, err, ErrOffline, "chart nope 1.0.0 from "+srv.URL+"/charts")
		wantNotCached(t, err, NotCachedError{Recipe: "r"})
	})
}

func TestRepoChartDigestMismatch(t *testing.T) {
	pinned := chartArchive(t, "app", "1.0.0")
	served := chartArchive(t, "app", "1.0.0-republished")
	other := sha([]byte("other"))
	for _, tc := range []struct {
		name   string
		listed string // digest in index.yaml
		serve  []byte
		ok     bool
		note   string
	}{
		{"republished upstream", sha(served), served, false, "the repository index lists the downloaded digest too"},
		{"archive differs from its index entry", sha(pinned), served, false, "differs from its index entry: the repository is inconsistent"},
		{"index matches neither", other, served, false, "the repository index lists " + other + ", which matches neither"},
		{"no digest in index", "", served, false, ""},
		{"index wrong but archive matches pin", other, pinned, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := serve(t, files(map[string][]byte{"/index.yaml": repoIndex("app", "1.0.0", "app-1.0.0.tgz", tc.listed), "/app-1.0.0.tgz": tc.serve}))
			f := newFetcher(t)
			src := recipe.Source{Chart: &recipe.ChartSource{Repository: srv.URL, Name: "app", Version: "1.0.0", Digest: sha(pinned)}}
			res, err := f.Fetch(context.Background(), "r", t.TempDir(), "up", src, PluginInfo{})
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "the repository index lists "+other+", but the archive matches the pin "+sha(pinned)) {
					t.Errorf("Warnings = %q, want one naming both digests", res.Warnings)
				}
				return
			}
			wantErr(t, err, nil, "chart app 1.0.0 from "+srv.URL, srv.URL+"/app-1.0.0.tgz", "expected "+sha(pinned), "got "+sha(tc.serve), tc.note, "bump spec.build")
			assertNotCached(t, f, sha(pinned))
		})
	}
}

func TestHostileChartIndex(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "index", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	archive := chartArchive(t, "x", "1.0.0")
	for _, tc := range []struct {
		name   string
		index  []byte
		opts   []Option
		target error
		msg    string
		valid  bool // the index itself is well-formed (and may be cached)
	}{
		{"billion laughs", read("billion-laughs.yaml"), nil, ErrUnsafe, "aliases expand the document far beyond its size", false},
		{"deep nesting", read("deep.yaml"), nil, ErrUnsafe, "nested deeper than 64 levels", false},
		{"huge index", []byte("apiVersion: v1\nentries: {}\n" + strings.Repeat("# padding\n", 20000)), []Option{WithMaxDownload(100_000)}, ErrTooLarge, "more than the limit of 100000", false},
		{"not an index", read("not-an-index.yaml"), nil, nil, "not a Helm chart repository index", false},
		{"file URL in index", repoIndex("x", "1.0.0", "file:///etc/passwd", ""), nil, ErrUnsafe, "only http and https", true},
		{"no URL", []byte("entries:\n  x:\n  - name: x\n    version: 1.0.0\n"), nil, nil, "lists no URL", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, count := serve(t, files(map[string][]byte{"/index.yaml": tc.index}))
			f := newFetcher(t, tc.opts...)
			src := recipe.Source{Chart: &recipe.ChartSource{Repository: srv.URL, Name: "x", Version: "1.0.0", Digest: sha(archive)}}
			_, err := f.Fetch(context.Background(), "r", t.TempDir(), "up", src, PluginInfo{})
			where := srv.URL + "/index.yaml"
			if tc.valid {
				where = "chart x 1.0.0 from " + srv.URL
			} else {
				assertNotCached(t, f, sha(tc.index))
			}
			wantErr(t, err, tc.target, where, tc.msg)
			assertNotCached(t, f, sha(archive))
			if n := count.reset(); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

// find looks version of name up in an index held in memory.
func find(data []byte, name, version string) (*chartVersion, error) {
	versions, charts, err := lookupChart(bytes.NewReader(data), name)
	if err != nil {
		return nil, err
	}
	return findVersion(versions, charts, name, version)
}

func TestLookupChart(t *testing.T) {
	b, _ := os.ReadFile("testdata/index/valid.yaml")
	for _, tc := range []struct{ name, version, url string }{
		{"redis", "7.2.4", "https://charts.example.com/redis-7.2.4.tgz"},
		{"redis", "7.2.3", "https://mirror.example.com/charts/redis-7.2.3.tgz"},
		{"nginx", "1.0.0", "https://charts.example.com/nginx-1.0.0.tgz"}, // listed as v1.0.0
	} {
		// The block layout is read line by line; the same index in flow
		// style (as JSON) takes the full parse. Both must agree.
		for layout, data := range map[string][]byte{"block": b, "flow": toFlow(t, b)} {
			v, err := find(data, tc.name, tc.version)
			if err != nil {
				t.Errorf("%s: find(%s, %s): %v", layout, tc.name, tc.version, err)
				continue
			}
			if u, err := v.archiveURL("https://charts.example.com/index.yaml"); err != nil || u != tc.url {
				t.Errorf("%s: archiveURL(%s %s) = %q, %v; want %q", layout, tc.name, tc.version, u, err, tc.url)
			}
		}
	}
	small, _ := os.ReadFile("testdata/index/small-alias.yaml")
	if versions, _, err := lookupChart(bytes.NewReader(small), "x"); err != nil || len(versions) != 2 {
		t.Errorf("lookupChart(small aliases) = %v, %v; want 2 entries", versions, err)
	}
	for _, tc := range []struct{ name, index, want string }{
		{"duplicate chart", "entries:\n  a:\n  - {name: a}\n  a:\n  - {name: a}\n", `chart "a" listed twice (first on line 2)`},
		{"duplicate chart, flow", "entries: {a: [], a: []}\n", `chart "a" listed twice`},
		{"no entries", "apiVersion: v1\n", "no entries"},
		{"long name", "entries:\n  " + strings.Repeat("n", 5000) + ":\n  - {}\n  " + strings.Repeat("n", 5000) + ":\n  - {}\n", "… (5000 bytes)"},
	} {
		if _, _, err := lookupChart(bytes.NewReader([]byte(tc.index)), "x"); err == nil || !strings.Contains(err.Error(), tc.want) || len(err.Error()) > 400 {
			t.Errorf("lookupChart(%s) = %v, want an error containing %q (and short)", tc.name, err, tc.want)
		}
	}
}

// toFlow rewrites a YAML document as JSON (a flow-style YAML document).
func toFlow(t testing.TB, b []byte) []byte {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func FuzzParseChartIndex(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/index/*.yaml")
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		f.Add(b, "redis")
	}
	f.Add([]byte("entries: {a: [{name: a, version: 1, urls: [x]}]}"), "a")
	f.Add([]byte("entries:\n  a:\n  - name: a\n    version: \"1\"\n    urls: [x]\n"), "a")
	f.Add([]byte("a: &a [*a]"), "a")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		versions, charts, err := lookupChart(bytes.NewReader(data), name)
		if err != nil {
			return
		}
		if versions != nil && charts == 0 {
			t.Fatalf("lookupChart found %q among 0 charts", name)
		}
		for _, v := range versions {
			if _, err := findVersion(versions, charts, name, v.Version); err != nil {
				t.Fatalf("findVersion(%q, %q) of a listed version: %v", name, v.Version, err)
			}
			if u, err := v.archiveURL("https://repo.example/index.yaml"); err == nil && !strings.HasPrefix(u, "http") {
				t.Fatalf("archiveURL allowed %q", u)
			}
		}
	})
}
