package sources

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/ulikunitz/xz"
)

// entry describes one archive member for the test archive builders.
type entry struct {
	name string
	body string
	typ  byte        // tar type flag; 0 means a regular file
	link string      // symlink or hard link target
	mode fs.FileMode // 0 means 0644 (0755 for directories)
}

func file(name, body string) entry      { return entry{name: name, body: body} }
func dirEntry(name string) entry        { return entry{name: name, typ: tar.TypeDir} }
func symlink(name, target string) entry { return entry{name: name, typ: tar.TypeSymlink, link: target} }

// tarball builds an uncompressed tar archive.
func tarball(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: int64(e.mode), ModTime: time.Unix(1700000000, 0), Format: tar.FormatPAX}
		switch e.typ {
		case 0:
			hdr.Typeflag = tar.TypeReg
			hdr.Size = int64(len(e.body))
		case tar.TypeXGlobalHeader:
			hdr = &tar.Header{Name: e.name, Typeflag: e.typ, PAXRecords: map[string]string{"comment": e.body}, Format: tar.FormatPAX}
		}
		if hdr.Mode == 0 && e.typ != tar.TypeXGlobalHeader {
			hdr.Mode = 0o644
			if e.typ == tar.TypeDir {
				hdr.Mode = 0o755
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatalf("tar header %s: %v", e.name, err)
		}
		if e.typ == 0 {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func xzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := xz.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zipball builds a zip archive; symlinks are stored as zip symlinks.
func zipball(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		body := e.body
		switch e.typ {
		case tar.TypeDir:
			h.SetMode(fs.ModeDir | 0o755)
		case tar.TypeSymlink:
			h.SetMode(fs.ModeSymlink | 0o777)
			body = e.link
		case tar.TypeChar:
			h.SetMode(fs.ModeDevice | fs.ModeCharDevice | 0o644)
		default:
			m := e.mode
			if m == 0 {
				m = 0o644
			}
			h.SetMode(m)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// chartArchive builds a Helm chart archive NAME-VERSION.tgz.
func chartArchive(t testing.TB, name, version string) []byte {
	t.Helper()
	return gzipped(t, tarball(t,
		file(name+"/Chart.yaml", "apiVersion: v2\nname: "+name+"\nversion: "+version+"\n"),
		file(name+"/values.yaml", "replicas: 1\n"),
		file(name+"/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n"),
	))
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// tree lists a directory as path → "d", "f:<content>", "x:<content>"
// (executable) or "l:<target>".
func tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			got[rel] = "l:" + target
		case d.IsDir():
			got[rel] = "d"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, _ := d.Info()
			kind := "f:"
			if fi.Mode()&0o111 != 0 {
				kind = "x:"
			}
			got[rel] = kind + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func sameTree(t testing.TB, got, want map[string]string) {
	t.Helper()
	var diffs []string
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			diffs = append(diffs, "  "+k+": got "+q(g, ok)+", want "+w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, "  "+k+": got "+g+", want nothing")
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		t.Errorf("tree differs:\n%s", strings.Join(diffs, "\n"))
	}
}

func q(s string, ok bool) string {
	if !ok {
		return "nothing"
	}
	return s
}

// newFetcher returns a Fetcher with a fresh cache, fast retries and a
// logger writing to the test log.
func newFetcher(t testing.TB, opts ...Option) *Fetcher {
	t.Helper()
	base := []Option{WithCacheDir(t.TempDir()), WithLogger(t.Logf), WithKeychain(noCreds{})}
	f, err := New(append(base, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	f.backoff = time.Millisecond
	return f
}

// withCache returns a Fetcher on an existing cache directory.
func withCache(t testing.TB, dir string, opts ...Option) *Fetcher {
	t.Helper()
	return newFetcher(t, append([]Option{WithCacheDir(dir)}, opts...)...)
}

// assertNotCached fails if the cache holds digest or a temporary file.
func assertNotCached(t testing.TB, f *Fetcher, digest string) {
	t.Helper()
	if _, err := os.Stat(f.cache.blobPath(digest)); err == nil {
		t.Errorf("cache holds %s after a failed fetch", digest)
	}
	tmps, _ := filepath.Glob(filepath.Join(f.cache.dir, "blobs", "sha256", ".*tmp-*"))
	if len(tmps) > 0 {
		t.Errorf("cache holds temporary files %v", tmps)
	}
}

// counter is an http.Handler wrapper that counts requests.
type counter struct {
	h     http.Handler
	n     atomic.Int64
	mu    sync.Mutex
	paths []string
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.n.Add(1)
	c.mu.Lock()
	c.paths = append(c.paths, r.Method+" "+r.URL.RequestURI())
	c.mu.Unlock()
	c.h.ServeHTTP(w, r)
}

func (c *counter) reset() int64 {
	c.mu.Lock()
	c.paths = nil
	c.mu.Unlock()
	return c.n.Swap(0)
}

// serve starts a loopback server for h, counting its requests.
func serve(t testing.TB, h http.Handler) (*httptest.Server, *counter) {
	t.Helper()
	c := &counter{h: h}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return srv, c
}

// files serves fixed bodies by path.
func files(m map[string][]byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := m[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, r.URL.Path, time.Unix(1700000000, 0), bytes.NewReader(b))
	})
}

// wantErr checks err against a sentinel (or nil for any error) and
// substrings of its message.
func wantErr(t testing.TB, err error, target error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", subs)
	}
	if target != nil && !errors.Is(err, target) {
		t.Errorf("error %q does not wrap %v", err, target)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
}

// wantNotCached checks that err is a *NotCachedError saying what want says
// of how the cache would get the source: the recipe to fetch, a pin, a
// digest nothing records (the command line's hint comes from these).
func wantNotCached(t testing.TB, err error, want NotCachedError) {
	t.Helper()
	var nc *NotCachedError
	if !errors.As(err, &nc) {
		t.Fatalf("error %v is not a *NotCachedError", err)
	}
	if nc.Recipe != want.Recipe || nc.Pinning != want.Pinning || nc.Unrecorded != want.Unrecorded || nc.Cache == "" {
		t.Errorf("NotCachedError = %+v, want recipe %q, pinning %v, unrecorded %v and the cache directory", *nc, want.Recipe, want.Pinning, want.Unrecorded)
	}
}

// noCreds is a keychain that never finds credentials, so tests do not read
// the machine's Docker configuration.
type noCreds struct{}

func (noCreds) Resolve(authn.Resource) (authn.Authenticator, error) { return authn.Anonymous, nil }

// cached puts b in f's cache and opens it; the file is closed when the test
// ends.
func cached(t testing.TB, f *Fetcher, b []byte) (digest string, blob *os.File) {
	t.Helper()
	digest, err := f.cache.put(bytes.NewReader(b), -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if blob, err = f.cache.open(digest); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blob.Close() })
	return digest, blob
}

// withMaxExtract lowers the bound on the bytes extracted from one archive
// (2 GiB outside the tests).
func withMaxExtract(n int64) Option { return func(f *Fetcher) { f.maxExtract = n } }

// withMaxExtractFile lowers the bound on one file extracted from an
// archive (1 GiB outside the tests).
func withMaxExtractFile(n int64) Option { return func(f *Fetcher) { f.maxFile = n } }

// withRetries sets how often a download is retried after a 5xx response or
// a broken connection (3 outside the tests).
func withRetries(n int) Option { return func(f *Fetcher) { f.retries = n } }
