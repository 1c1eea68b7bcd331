package sources

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/spec"
)

func TestFetchURL(t *testing.T) {
	plain := []byte("apiVersion: v1\nkind: Namespace\n")
	tgz := gzipped(t, tarball(t, file("proj-1.0/README", "r"), file("proj-1.0/deploy/a.yaml", "a"), file("proj-1.0/deploy/b.yaml", "b")))
	zipped := zipball(t, file("deploy/a.yaml", "a"))
	srv, _ := serve(t, files(map[string][]byte{"/ns.yaml": plain, "/proj.tar.gz": tgz, "/proj.zip": zipped}))
	local := filepath.Join(t.TempDir(), "local.tgz")
	os.WriteFile(local, tgz, 0o644)

	for _, tc := range []struct {
		name     string
		src      recipe.Source
		wantFile string            // content of Result.Path when it is a file
		wantTree map[string]string // tree at Result.Path when it is a directory
	}{
		{"plain file", recipe.Source{URL: srv.URL + "/ns.yaml", SHA256: sha(plain)}, string(plain), nil},
		{"bare hex pin", recipe.Source{URL: srv.URL + "/ns.yaml", SHA256: strings.TrimPrefix(sha(plain), "sha256:")}, string(plain), nil},
		{"archive", recipe.Source{URL: srv.URL + "/proj.tar.gz", SHA256: sha(tgz), Strip: 1}, "",
			map[string]string{"README": "f:r", "deploy": "d", "deploy/a.yaml": "f:a", "deploy/b.yaml": "f:b"}},
		{"archive path to a folder", recipe.Source{URL: srv.URL + "/proj.tar.gz", SHA256: sha(tgz), Strip: 1, Path: "deploy"}, "",
			map[string]string{"a.yaml": "f:a", "b.yaml": "f:b"}},
		{"archive path without strip", recipe.Source{URL: srv.URL + "/proj.tar.gz", SHA256: sha(tgz), Path: "proj-1.0/deploy/"}, "",
			map[string]string{"a.yaml": "f:a", "b.yaml": "f:b"}},
		{"archive path to a file", recipe.Source{URL: srv.URL + "/proj.tar.gz", SHA256: sha(tgz), Strip: 1, Path: "deploy/b.yaml"}, "b", nil},
		{"zip", recipe.Source{URL: srv.URL + "/proj.zip", SHA256: sha(zipped)}, "", map[string]string{"deploy": "d", "deploy/a.yaml": "f:a"}},
		{"file URL", recipe.Source{URL: "file://" + local, SHA256: sha(tgz), Strip: 1, Path: "deploy"}, "",
			map[string]string{"a.yaml": "f:a", "b.yaml": "f:b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFetcher(t)
			res, err := f.Fetch(context.Background(), t.TempDir(), t.TempDir(), "upstream", tc.src, PluginInfo{})
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			want := spec.ResolvedSource{Name: "upstream", Kind: "url", Origin: tc.src.URL, Digest: "sha256:" + strings.TrimPrefix(tc.src.SHA256, "sha256:")}
			if res.Resolved != want {
				t.Errorf("Resolved = %+v, want %+v", res.Resolved, want)
			}
			if tc.wantTree != nil {
				sameTree(t, tree(t, res.Path), tc.wantTree)
				return
			}
			if b, err := os.ReadFile(res.Path); err != nil || string(b) != tc.wantFile {
				t.Errorf("Result.Path %s holds %q (%v), want %q", res.Path, b, err, tc.wantFile)
			}
		})
	}
}

func TestFetchURLErrors(t *testing.T) {
	plain := []byte("x")
	tgz := gzipped(t, tarball(t, file("a/b", "1")))
	srv, _ := serve(t, files(map[string][]byte{"/x.yaml": plain, "/a.tgz": tgz}))
	for _, tc := range []struct {
		name   string
		src    recipe.Source
		target error
		msg    string
	}{
		{"path on a plain file", recipe.Source{URL: srv.URL + "/x.yaml", SHA256: sha(plain), Path: "a"}, nil, "path and strip apply to archives"},
		{"path missing", recipe.Source{URL: srv.URL + "/a.tgz", SHA256: sha(tgz), Path: "nope"}, nil, `path "nope" is not in the archive`},
		{"path leaving", recipe.Source{URL: srv.URL + "/a.tgz", SHA256: sha(tgz), Path: "../x"}, ErrUnsafe, "leaves the archive"},
		{"bad pin", recipe.Source{URL: srv.URL + "/x.yaml", SHA256: "abc"}, nil, "not a sha256 digest"},
		{"bad name", recipe.Source{URL: srv.URL + "/x.yaml", SHA256: sha(plain)}, nil, "plain file name"},
		{"no work dir", recipe.Source{URL: srv.URL + "/x.yaml", SHA256: sha(plain)}, nil, "no work directory"},
		{"no kind", recipe.Source{SHA256: sha(plain)}, nil, "exactly one of url, chart, dir, plugin, git or image"},
		{"two kinds", recipe.Source{URL: srv.URL + "/x.yaml", Dir: "x"}, nil, "exactly one of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, work := "src", t.TempDir()
			switch tc.name {
			case "bad name":
				name = "../x"
			case "no work dir":
				work = ""
			}
			_, err := newFetcher(t).Fetch(context.Background(), t.TempDir(), work, name, tc.src, PluginInfo{})
			wantErr(t, err, tc.target, tc.msg)
		})
	}
}

// rawServer answers every connection with the bytes resp returns, ignoring
// the request, then closes it: for servers that lie.
func rawServer(t *testing.T, resp func() string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				c.Write([]byte(resp()))
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

func TestDownloadHostile(t *testing.T) {
	body := strings.Repeat("kbuild", 1000)
	pin := sha([]byte(body))
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	failures := 0
	srv, count := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.Write([]byte(body))
		case "/changed":
			w.Write([]byte(body + "!"))
		case "/missing":
			http.NotFound(w, r)
		case "/flaky":
			if failures++; failures <= 2 {
				http.Error(w, "try again", http.StatusBadGateway)
				return
			}
			w.Write([]byte(body))
		case "/down":
			http.Error(w, "down", http.StatusServiceUnavailable)
		case "/hang":
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		case "/hang-body":
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.Write([]byte(body[:100]))
			w.(http.Flusher).Flush()
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		case "/chunked":
			for range 20 {
				w.Write([]byte(body))
				w.(http.Flusher).Flush()
			}
		}
	}))
	more := rawServer(t, func() string {
		return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n%s", body)
	})
	fewer := rawServer(t, func() string {
		return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body[:100])
	})
	reset := rawServer(t, func() string { return "" })

	for _, tc := range []struct {
		name     string
		url      string
		opts     []Option
		target   error
		msg      []string
		requests int64 // to srv; -1: do not check
	}{
		{"digest mismatch", srv.URL + "/changed", nil, nil,
			[]string{"download: sha256 mismatch for " + srv.URL + "/changed: expected " + pin, "got " + sha([]byte(body+"!")), "update the pin and bump spec.build"}, 1},
		{"404 is not retried", srv.URL + "/missing", nil, nil, []string{"GET " + srv.URL + "/missing: 404 Not Found"}, 1},
		{"503 is retried, then given up", srv.URL + "/down", []Option{withRetries(2)}, nil, []string{"GET " + srv.URL + "/down: 503 Service Unavailable (gave up after 3 attempts)"}, 3},
		{"server hangs before headers", srv.URL + "/hang", []Option{WithTimeout(300 * time.Millisecond)}, netdeadline.ErrStalled,
			[]string{srv.URL + "/hang", "no response within 300ms"}, 1},
		{"server hangs in the body", srv.URL + "/hang-body", []Option{WithTimeout(300 * time.Millisecond)}, netdeadline.ErrStalled,
			[]string{"no data for 300ms after 100 bytes"}, 1},
		{"announced size over the limit", srv.URL + "/ok", []Option{WithMaxDownload(1000)}, ErrTooLarge,
			[]string{"announces 6000 bytes, more than the download limit of 1000"}, 1},
		{"unannounced size over the limit", srv.URL + "/chunked", []Option{WithMaxDownload(10000)}, ErrTooLarge,
			[]string{srv.URL + "/chunked", "more than the download limit of 10000 bytes"}, 1},
		{"more bytes than announced", more + "/x", nil, nil, []string{"expected " + pin, "(100 bytes)"}, -1},
		{"fewer bytes than announced", fewer + "/x", []Option{withRetries(1)}, nil,
			[]string{"download " + fewer + "/x: the connection ended before the 6000 bytes announced: unexpected EOF (gave up after 2 attempts)"}, -1},
		{"connection reset", reset + "/x", []Option{withRetries(1)}, nil, []string{"GET " + reset + "/x: EOF (gave up after 2 attempts)"}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFetcher(t, tc.opts...)
			count.reset()
			start := time.Now()
			_, err := f.Fetch(context.Background(), t.TempDir(), t.TempDir(), "src", recipe.Source{URL: tc.url, SHA256: pin}, PluginInfo{})
			wantErr(t, err, tc.target, tc.msg...)
			t.Logf("error after %s: %v", time.Since(start).Round(time.Millisecond), err)
			if n := count.reset(); tc.requests >= 0 && n != tc.requests {
				t.Errorf("server got %d requests, want %d", n, tc.requests)
			}
			assertNotCached(t, f, pin)
		})
	}

	t.Run("5xx then success", func(t *testing.T) {
		f := newFetcher(t)
		count.reset()
		if _, err := f.Fetch(context.Background(), t.TempDir(), t.TempDir(), "src", recipe.Source{URL: srv.URL + "/flaky", SHA256: pin}, PluginInfo{}); err != nil {
			t.Fatalf("Fetch: %v", err)
		}
		if n := count.reset(); n != 3 {
			t.Errorf("server got %d requests, want 3 (two 502, then 200)", n)
		}
	})
	t.Run("mismatch is a DigestMismatchError", func(t *testing.T) {
		_, err := newFetcher(t).Fetch(context.Background(), t.TempDir(), t.TempDir(), "src", recipe.Source{URL: srv.URL + "/changed", SHA256: pin}, PluginInfo{})
		var dm *DigestMismatchError
		if !errors.As(err, &dm) || dm.Expected != pin || dm.Got != sha([]byte(body+"!")) || dm.URL != srv.URL+"/changed" {
			t.Errorf("error = %#v, want a *DigestMismatchError with both digests and the URL", err)
		}
	})
}

// TestHostileArchivesNotCached fetches each hostile archive as a url
// source pinned by its own digest: the fetch fails and the cache keeps
// nothing under that digest.
func TestHostileArchivesNotCached(t *testing.T) {
	for _, tc := range hostileArchives(t) {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := serve(t, files(map[string][]byte{"/a.tar.gz": tc.archive}))
			f := newFetcher(t, withMaxExtractFile(tc.opts.maxFile), withMaxExtract(tc.opts.maxTotal))
			src := recipe.Source{URL: srv.URL + "/a.tar.gz", SHA256: sha(tc.archive), Strip: tc.opts.strip}
			var err error
			if tc.opts.noSymlinks {
				srv, _ := serve(t, files(map[string][]byte{"/index.yaml": repoIndex("c", "1.0.0", "c-1.0.0.tgz", ""), "/c-1.0.0.tgz": tc.archive}))
				src = recipe.Source{Chart: &recipe.ChartSource{Repository: srv.URL, Name: "c", Version: "1.0.0", Digest: sha(tc.archive)}}
			}
			_, err = f.Fetch(context.Background(), t.TempDir(), t.TempDir(), "src", src, PluginInfo{})
			wantErr(t, err, tc.target, tc.msg)
			assertNotCached(t, f, sha(tc.archive))
		})
	}
}

func TestOffline(t *testing.T) {
	body := []byte("payload")
	srv, count := serve(t, files(map[string][]byte{"/p.txt": body}))
	cacheDir := t.TempDir()
	src := recipe.Source{URL: srv.URL + "/p.txt", SHA256: sha(body)}

	offline := withCache(t, cacheDir, WithOffline(true))
	_, err := offline.Fetch(context.Background(), "recipes/demo", t.TempDir(), "src", src, PluginInfo{})
	wantErr(t, err, ErrOffline, `source "src"`, srv.URL+"/p.txt", sha(body))
	wantNotCached(t, err, NotCachedError{Recipe: "recipes/demo"})
	if n := count.reset(); n != 0 {
		t.Errorf("offline fetch made %d requests", n)
	}

	if _, err := withCache(t, cacheDir).Fetch(context.Background(), "recipes/demo", t.TempDir(), "src", src, PluginInfo{}); err != nil {
		t.Fatal(err)
	}
	count.reset()
	res, err := offline.Fetch(context.Background(), "recipes/demo", t.TempDir(), "src", src, PluginInfo{})
	if err != nil {
		t.Fatalf("offline Fetch after caching: %v", err)
	}
	if b, _ := os.ReadFile(res.Path); string(b) != string(body) {
		t.Errorf("offline fetch gave %q", b)
	}
	if n := count.reset(); n != 0 {
		t.Errorf("offline fetch made %d requests", n)
	}
}

func TestCorruptedCacheEntry(t *testing.T) {
	body := []byte("payload")
	srv, count := serve(t, files(map[string][]byte{"/p.txt": body}))
	src := recipe.Source{URL: srv.URL + "/p.txt", SHA256: sha(body)}
	f := newFetcher(t)
	fetch := func(f *Fetcher) error {
		_, err := f.Fetch(context.Background(), "r", t.TempDir(), "src", src, PluginInfo{})
		return err
	}
	if err := fetch(f); err != nil {
		t.Fatal(err)
	}
	count.reset()
	os.WriteFile(f.cache.blobPath(sha(body)), []byte("tampered"), 0o644)
	if err := fetch(f); err != nil {
		t.Fatalf("Fetch after corruption: %v", err)
	}
	if n := count.reset(); n != 1 {
		t.Errorf("corrupted entry was not fetched again (%d requests)", n)
	}
	if b, _ := os.ReadFile(f.cache.blobPath(sha(body))); string(b) != string(body) {
		t.Errorf("cache entry holds %q after refetch", b)
	}

	os.WriteFile(f.cache.blobPath(sha(body)), []byte("tampered"), 0o644)
	offline := withCache(t, f.cache.dir, WithOffline(true))
	wantErr(t, fetch(offline), ErrOffline, "not in the cache")
	assertNotCached(t, f, sha(body))
}

func TestAdd(t *testing.T) {
	data := []byte("vendored tarball bytes")
	p := filepath.Join(t.TempDir(), "x.bin")
	os.WriteFile(p, data, 0o644)
	f := newFetcher(t, WithOffline(true))
	d, err := f.Add(context.Background(), p)
	if err != nil || d != sha(data) {
		t.Fatalf("Add = %q, %v; want %q", d, err, sha(data))
	}
	// A recipe pinning the file now builds offline, from an unreachable URL.
	src := recipe.Source{URL: "https://unreachable.invalid/x.bin", SHA256: d}
	res, err := f.Fetch(context.Background(), "r", t.TempDir(), "src", src, PluginInfo{})
	if err != nil {
		t.Fatalf("Fetch after Add: %v", err)
	}
	if b, _ := os.ReadFile(res.Path); string(b) != string(data) || filepath.Base(res.Path) != "x.bin" {
		t.Errorf("Fetch gave %s = %q", res.Path, b)
	}
	if _, err := f.Add(context.Background(), "/nonexistent"); err == nil {
		t.Error("Add of a missing file succeeded")
	}
}

func TestAuth(t *testing.T) {
	body := []byte("private")
	srv, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "Basic dXNlcjpzM2NyZXQ=", "Bearer t0ken": // user:s3cret
			w.Write(body)
		default:
			http.Error(w, "who are you", http.StatusUnauthorized)
		}
	}))
	host := strings.Split(strings.TrimPrefix(srv.URL, "http://"), ":")[0]
	netrc := filepath.Join(t.TempDir(), "netrc")
	os.WriteFile(netrc, []byte("machine other login a password b\nmachine "+host+"\n  login user\n  password s3cret\n"), 0o600)
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, nil, 0o600)
	env := "KBUILD_HTTP_AUTH_127_0_0_1"
	if authEnvName(host) != env {
		t.Fatalf("authEnvName(%q) = %q, want %q", host, authEnvName(host), env)
	}

	for _, tc := range []struct {
		name, netrc, env, url string
		ok                    bool
	}{
		{"none", empty, "", srv.URL + "/f", false},
		{"netrc", netrc, "", srv.URL + "/f", true},
		{"env basic", empty, "user:s3cret", srv.URL + "/f", true},
		{"env bearer", empty, "t0ken", srv.URL + "/f", true},
		{"env wins over netrc", netrc, "user:wrong", srv.URL + "/f", false},
		{"credentials in the URL", empty, "", strings.Replace(srv.URL, "://", "://user:s3cret@", 1) + "/f", true},
		{"wrong credentials in the URL", empty, "", strings.Replace(srv.URL, "://", "://user:wr0ng@", 1) + "/f", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NETRC", tc.netrc)
			t.Setenv(env, tc.env)
			var logs strings.Builder
			f := newFetcher(t, WithLogger(func(format string, args ...any) { fmt.Fprintf(&logs, format+"\n", args...) }))
			_, err := f.Fetch(context.Background(), "r", t.TempDir(), "src", recipe.Source{URL: tc.url, SHA256: sha(body)}, PluginInfo{})
			if tc.ok && err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if !tc.ok {
				wantErr(t, err, nil, "401", "KBUILD_HTTP_AUTH_<HOST>")
			}
			for _, secret := range []string{"s3cret", "wr0ng", "t0ken"} {
				if strings.Contains(logs.String(), secret) || (err != nil && strings.Contains(err.Error(), secret)) {
					t.Errorf("credential %q leaked: log %q, error %v", secret, logs.String(), err)
				}
			}
		})
	}
}

func TestParseNetrc(t *testing.T) {
	const text = `# comment-free netrc
machine a.example login alice password pa
machine b.example
	login bob
	account x
	password pb
macdef init
	machine c.example login mallory password pm

default login anon password pd
`
	for _, tc := range []struct{ host, user, pass string }{
		{"a.example", "alice", "pa"},
		{"b.example", "bob", "pb"},
		{"c.example", "anon", "pd"}, // inside a macro: not an entry
		{"z.example", "anon", "pd"},
	} {
		u, p, ok := parseNetrc(text, tc.host)
		if !ok || u != tc.user || p != tc.pass {
			t.Errorf("parseNetrc(%s) = %q, %q, %v; want %q, %q", tc.host, u, p, ok, tc.user, tc.pass)
		}
	}
	if _, _, ok := parseNetrc("machine a login x password y", "b"); ok {
		t.Error("parseNetrc found credentials for an unlisted host without default")
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://charts.example.com/x.tgz", "https://charts.example.com/x.tgz"},
		{"https://u:p4ss@charts.example.com/x.tgz", "https://u:xxxxx@charts.example.com/x.tgz"},
		{"https://u@charts.example.com/x", "https://u@charts.example.com/x"},
		{"http://u:p4ss@127.0.0.1:80x/r.git", "http://u:xxxxx@127.0.0.1:80x/r.git"}, // does not parse
		{"git@github.com:org/repo.git", "git@github.com:org/repo.git"},
	} {
		if got := redact(tc.in); got != tc.want {
			t.Errorf("redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNew(t *testing.T) {
	for _, opts := range [][]Option{
		{WithMaxDownload(0)}, {withMaxExtract(-1)}, {withMaxExtractFile(0)}, {WithTimeout(0)},
		{WithPluginTimeout(-time.Second)}, {withRetries(-1)}, {WithKeychain(nil)},
	} {
		if _, err := New(append([]Option{WithCacheDir(t.TempDir())}, opts...)...); err == nil {
			t.Errorf("New accepted an invalid option")
		}
	}
	t.Setenv("XDG_CACHE_HOME", "/tmp/xdg")
	f, err := New()
	if err != nil || f.cache.dir != "/tmp/xdg/kbuild" {
		t.Errorf("default cache dir = %q, %v; want /tmp/xdg/kbuild", f.cache.dir, err)
	}
}
