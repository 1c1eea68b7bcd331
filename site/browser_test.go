package site

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/testenv"
)

// browser runs headless Chromium against a loopback server and records
// every request the server answers, so a test can fail on any resource the
// page could not load.
type browser struct {
	t    *testing.T
	bin  string
	srv  *httptest.Server
	mu   sync.Mutex
	bad  []string // "GET /path -> 404" for every response >= 400
	seen int
}

// statusRecorder remembers the status code a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

func newBrowser(t *testing.T, h http.Handler) *browser {
	b := &browser{t: t, bin: testenv.Tool(t, "chromium")}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		b.mu.Lock()
		defer b.mu.Unlock()
		b.seen++
		if rec.code >= 400 {
			b.bad = append(b.bad, fmt.Sprintf("%s %s -> %d", r.Method, r.URL.Path, rec.code))
		}
	}))
	t.Cleanup(b.srv.Close)
	return b
}

// consoleRE matches Chromium's log line for a console message, in the
// older "CONSOLE(12)" and the newer "CONSOLE:12]" forms. Chromium logs
// every level as INFO, so any console message fails the test: the catalog
// logs nothing.
var consoleRE = regexp.MustCompile(`:CONSOLE[(:]\d+[)\]]\s*(.*)`)

// run loads the page at path (relative to the server) with extra flags and
// returns stdout and the console messages logged while it loaded.
func (b *browser) run(path string, flags ...string) (stdout string, console []string) {
	t := b.t
	t.Helper()
	tmp := t.TempDir()
	args := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--disable-breakpad", "--hide-scrollbars",
		"--user-data-dir=" + filepath.Join(tmp, "profile"),
		"--enable-logging=stderr", "--v=0",
	}
	args = append(args, flags...)
	args = append(args, b.srv.URL+path)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+tmp)
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", path, err, tail(errb.String(), 40))
	}
	for _, line := range strings.Split(errb.String(), "\n") {
		if m := consoleRE.FindStringSubmatch(line); m != nil {
			console = append(console, m[1])
		}
	}
	return out.String(), console
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// outputDir is where screenshots go: $KBUILD_TEST_OUTPUT (kept for people
// and CI artifacts) or a temporary directory.
func outputDir(t *testing.T) string {
	if d := os.Getenv("KBUILD_TEST_OUTPUT"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// publishSite writes the catalog and the files the options say exist into
// a new site directory.
func publishSite(t *testing.T) string {
	dir := t.TempDir()
	if err := Write(dir, testIndex(t), testOptions()...); err != nil {
		t.Fatal(err)
	}
	for _, f := range append([]string{"index.yaml"}, publishedFiles...) {
		p := filepath.Join(dir, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBrowserConsoleDetection proves the console check works with this
// Chromium: a page that logs an error and throws must be caught.
func TestBrowserConsoleDetection(t *testing.T) {
	b := newBrowser(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page.html":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!DOCTYPE html><html><head><link rel="icon" href="data:,"><script src="bad.js"></script></head><body>x</body></html>`)
		case "/bad.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, `console.error("kbuild-selftest"); notDefined();`)
		default:
			http.NotFound(w, r)
		}
	}))
	_, console := b.run("/page.html", "--dump-dom")
	joined := strings.Join(console, "\n")
	if !strings.Contains(joined, "kbuild-selftest") || !strings.Contains(joined, "notDefined") {
		t.Fatalf("console messages = %q; want the self-test error and the uncaught exception: the check cannot see console errors", console)
	}
}

// TestBrowser serves the catalog under a sub-path, as GitHub Pages does for
// a project site, and loads it in headless Chromium.
func TestBrowser(t *testing.T) {
	dir := publishSite(t)
	h, err := NewHandler(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, http.StripPrefix("/repo", h))
	out := outputDir(t)

	pages := []struct {
		path  string
		want  []string
		avoid []string
	}{
		{
			path: "/repo/index.html",
			want: []string{
				`<a class="pkg-name" href="packages/kubevirt.html">kubevirt</a>`,
				`<a class="pkg-name" href="packages/cdi.html">cdi</a>`,
				`<a class="pkg-name" href="packages/evil.html">evil</a>`,
				// The hostile description is text, not markup.
				`<p class="desc">&lt;script&gt;alert(1)&lt;/script&gt;</p>`,
				// search.js ran: the filter box, the relative expiry and the site URL.
				`<input type="search"`,
				`<span class="relative">`,
				`<span class="site-url" data-rel="index.yaml">` + b.srv.URL + `/repo/index.yaml</span>`,
			},
			avoid: []string{"<script>alert", "SITE_URL/index.yaml"},
		},
		{
			path: "/repo/packages/kubevirt.html",
			want: []string{
				`<h1>kubevirt</h1>`,
				`<section class="version" id="v1.9.0-4">`,
				`oci://ghcr.io/example/kubevirt/kubevirt-operator@` + operatorManifest,
				`helm install kubevirt-operator oci://ghcr.io/example/kubevirt/kubevirt-operator --version 1.9.0-4`,
				`<a href="../sbom/kubevirt-1.9.0-4.cdx.json">SBOM (CycloneDX)</a>`,
				`<span class="site-url" data-rel="../index.yaml">` + b.srv.URL + `/repo/index.yaml</span>`,
			},
		},
		{
			path:  "/repo/packages/evil.html",
			want:  []string{`<p class="lead">&lt;script&gt;alert(1)&lt;/script&gt;</p>`},
			avoid: []string{"<script>alert", "<img src=\"x\"", "<b onmouseover"},
		},
	}
	for _, p := range pages {
		t.Run("dom "+p.path, func(t *testing.T) {
			dom, console := b.run(p.path, "--dump-dom")
			if len(console) > 0 {
				t.Errorf("console messages while loading %s:\n%s", p.path, strings.Join(console, "\n"))
			}
			for _, w := range p.want {
				if !strings.Contains(dom, w) {
					t.Errorf("DOM of %s lacks %q", p.path, w)
				}
			}
			for _, a := range p.avoid {
				if strings.Contains(dom, a) {
					t.Errorf("DOM of %s contains %q", p.path, a)
				}
			}
		})
	}

	for _, s := range []struct{ path, file string }{
		{"/repo/index.html", "index.png"},
		{"/repo/packages/kubevirt.html", "kubevirt.png"},
	} {
		t.Run("screenshot "+s.file, func(t *testing.T) {
			png := filepath.Join(out, s.file)
			os.Remove(png)
			_, console := b.run(s.path, "--screenshot="+png, "--window-size=1280,900")
			if len(console) > 0 {
				t.Errorf("console messages while loading %s:\n%s", s.path, strings.Join(console, "\n"))
			}
			fi, err := os.Stat(png)
			if err != nil || fi.Size() < 10000 {
				t.Fatalf("screenshot %s: %v (size %d); want a rendered page", png, err, sizeOf(fi))
			}
			t.Logf("screenshot of %s: %s", s.path, png)
		})
	}

	b.mu.Lock()
	bad, seen := b.bad, b.seen
	b.mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("the browser requested resources that failed:\n%s", strings.Join(bad, "\n"))
	}
	if seen == 0 {
		t.Errorf("the browser made no requests")
	}
}

func sizeOf(fi os.FileInfo) int64 {
	if fi == nil {
		return 0
	}
	return fi.Size()
}

// linkRE finds href and src attribute values in the generated HTML.
var linkRE = regexp.MustCompile(`\s(?:href|src)="([^"]*)"`)

// idRE finds element ids, the targets of fragment links.
var idRE = regexp.MustCompile(`\sid="([^"]*)"`)

// TestLinks crawls every href and src of every generated page and GETs it
// through the server under the sub-path: each must answer 200 and stay
// under /repo/, and each fragment must name an element of its page. The
// only links leaving the site are the packages' home pages.
func TestLinks(t *testing.T) {
	dir := publishSite(t)
	h, err := NewHandler(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.StripPrefix("/repo", h))
	defer srv.Close()
	external := map[string]bool{}
	for _, p := range testIndex(t).Packages {
		external[p.Home] = true
	}

	checked := 0
	for _, page := range Files(testIndex(t)) {
		if !strings.HasSuffix(page, ".html") {
			continue
		}
		body, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		base, _ := url.Parse(srv.URL + "/repo/" + page)
		ids := map[string]bool{}
		for _, m := range idRE.FindAllStringSubmatch(string(body), -1) {
			ids[html.UnescapeString(m[1])] = true
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(body), -1) {
			ref := html.UnescapeString(m[1])
			u, err := base.Parse(ref)
			if err != nil {
				t.Errorf("%s: link %q: %v", page, ref, err)
				continue
			}
			if u.Host != base.Host {
				if !external[ref] {
					t.Errorf("%s: link %q leaves the site; only home pages may", page, ref)
				}
				continue
			}
			if strings.HasPrefix(ref, "/") {
				t.Errorf("%s: link %q is absolute; it breaks under a Pages sub-path", page, ref)
			}
			if !strings.HasPrefix(u.Path, "/repo/") {
				t.Errorf("%s: link %q resolves to %s, outside the site", page, ref, u.Path)
				continue
			}
			if u.Fragment != "" && u.Path == base.Path && !ids[u.Fragment] {
				t.Errorf("%s: link %q names no element of the page", page, ref)
			}
			resp, err := http.Get(u.String())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			checked++
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s: link %q -> GET %s = %d, want 200", page, ref, u.Path, resp.StatusCode)
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d links, want the whole catalog's (at least 20)", checked)
	}
}

// TestBrowserSuites loads, in headless Chromium, the site root's page of
// suites and the testing suite's page of kubevirt, whose versions say
// which suites hold them, and follows the badge to the unstable suite's
// page.
func TestBrowserSuites(t *testing.T) {
	root := t.TempDir()
	idx := testIndex(t)
	kv := idx.Packages["kubevirt"].Versions
	testingX := &index.RepositoryIndex{Generated: idx.Generated, Expires: idx.Expires, Packages: map[string]*index.IndexPackage{"kubevirt": {Description: "Virtual machines on Kubernetes", Versions: kv[:1]}}}
	names := []string{"unstable", "testing"}
	for _, s := range []struct {
		name string
		x    *index.RepositoryIndex
	}{{"unstable", idx}, {"testing", testingX}} {
		h := &Suites{This: s.name, Names: names}
		h.Add("unstable", idx)
		h.Add("testing", testingX)
		if err := Write(filepath.Join(root, s.name), s.x, WithSuites(h)); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteSuites(root, idx, []SuiteRow{{Name: "unstable", Policy: "new builds", AtRoot: true}, {Name: "testing", Policy: "from unstable"}, {Name: "stable", Policy: "from testing", NoIndex: true}}); err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(root)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, http.StripPrefix("/repo", h))
	for _, p := range []struct {
		path string
		want []string
	}{
		{"/repo/index.html", []string{`<a class="pkg-name" href="testing/index.html">testing</a>`, `also index.yaml here`,
			// stable has no index yet: named, not linked.
			`<span class="pkg-name">stable</span> <span class="badge">no index yet</span>`,
			// the subscribe snippet, its URL completed by search.js
			`kubepkg repo add kubepkg-repository-testing <span class="site-url" data-rel="testing/index.yaml">` + b.srv.URL + `/repo/testing/index.yaml</span> --public-key index.pub`,
			`<a href="unstable/keys/index.pub">unstable/keys/index.pub</a>`,
		}},
		{"/repo/testing/packages/kubevirt.html", []string{
			`<span class="badge suite"><a href="../../unstable/packages/kubevirt.html#v1.8.2-1">unstable</a></span> <span class="badge suite">testing</span>`,
			// Flux, Argo CD and Helm follow testing through its repository.
			`<summary>Follow testing with Flux, Argo CD or Helm</summary>`,
			`helm upgrade --install kubevirt-operator oci://ghcr.io/example/kubevirt/suites/testing/kubevirt-operator --version '&gt;=0.0.0-0'`,
			`url: oci://ghcr.io/example/kubevirt/suites/testing/kubevirt-operator`,
			`semver: "&gt;=0.0.0-0"`,
			`provider: cosign`,
		}},
		{"/repo/unstable/packages/kubevirt.html", []string{
			`<span class="badge suite">unstable</span> <span class="badge suite"><a href="../../testing/packages/kubevirt.html#v1.8.2-1">testing</a></span>`,
			`<section class="version" id="v1.8.2-1">`,
		}},
	} {
		t.Run(p.path, func(t *testing.T) {
			dom, console := b.run(p.path, "--dump-dom")
			if len(console) > 0 {
				t.Errorf("console messages while loading %s:\n%s", p.path, strings.Join(console, "\n"))
			}
			for _, w := range p.want {
				if !strings.Contains(dom, w) {
					t.Errorf("DOM of %s lacks %q", p.path, w)
				}
			}
			if strings.Contains(dom, `href="stable/`) {
				t.Errorf("DOM of %s links suite stable, which has no index", p.path)
			}
		})
	}
	// The suite list and a suite's package page with the follow snippets
	// open, at a desktop's and a phone's width.
	for _, w := range []string{"1280,900", "390,844"} {
		for _, p := range []string{"/repo/index.html", "/repo/testing/packages/kubevirt.html"} {
			png := filepath.Join(outputDir(t), "suites-"+strings.NewReplacer("/", "_", ",", "x").Replace(strings.TrimPrefix(p, "/repo/"))+"-"+strings.Split(w, ",")[0]+".png")
			os.Remove(png)
			if _, console := b.run(p, "--screenshot="+png, "--window-size="+w); len(console) > 0 {
				t.Errorf("console messages at %s: %s", w, strings.Join(console, "\n"))
			}
			if fi, err := os.Stat(png); err != nil || fi.Size() < 10000 {
				t.Errorf("screenshot %s at %s: %v (size %d); want a rendered page", p, w, err, sizeOf(fi))
			}
		}
	}
	png := filepath.Join(outputDir(t), "suites-kubevirt.png")
	if _, console := b.run("/repo/unstable/packages/kubevirt.html", "--screenshot="+png, "--window-size=1280,900"); len(console) > 0 {
		t.Errorf("console messages: %s", strings.Join(console, "\n"))
	}
	b.mu.Lock()
	bad := b.bad
	b.mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("the browser requested resources that failed:\n%s", strings.Join(bad, "\n"))
	}
}
