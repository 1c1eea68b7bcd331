package site

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// setSite writes a site of two suites whose index holds testIndex and a
// release set, virt-stack 1.0.0 build 1, pinning kubevirt 1.9.0 build 4
// and cdi 1.66.1 build 1, with the matrices of the set (phases listed)
// and of cdi (result only), and the page of suites.
func setSite(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	idx, setDigest := setIndex(t)
	compat := []string{"cdi", "virt-stack"}
	names := []string{"unstable", "testing"}
	for _, s := range names {
		h := &Suites{This: s, Names: names, List: true, Compat: compat}
		h.Add("unstable", idx)
		h.Add("testing", idx)
		if err := Write(filepath.Join(root, s), idx, append(testOptions(), WithSuites(h), WithPublicKeys("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAexample\n-----END PUBLIC KEY-----\n"))...); err != nil {
			t.Fatal(err)
		}
		writeStubs(t, filepath.Join(root, s), append([]string{"index.yaml", "keys/index.pub"}, publishedFiles...))
	}
	if err := WriteSuites(root, idx, []SuiteRow{{Name: "unstable", Policy: "new builds", AtRoot: true}, {Name: "testing", Policy: "from unstable"}}, WithCompat(compat...)); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteMatrices(root, setMatrices(idx, setDigest, names), WithSuites(&Suites{Names: names, List: true})); err != nil {
		t.Fatal(err)
	}
	writeStubs(t, root, []string{"evidence/x/arch=amd64,kubernetes=1.33.intoto.json", "evidence/x/arch=arm64,kubernetes=1.34.intoto.json"})
	return root
}

// rootCompatSite writes the site of setSite without suites: one catalog
// at the site root, its index holding the release set, and the matrices
// beside it (WriteMatrices and Write without WithSuites), as a publish
// without suites.yaml that brings evidence writes them.
func rootCompatSite(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	idx, setDigest := setIndex(t)
	if _, err := WriteMatrices(root, setMatrices(idx, setDigest, nil), WithTitle("Example Virtualization")); err != nil {
		t.Fatal(err)
	}
	compat, err := ListMatrices(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(root, idx, append(testOptions(), WithCompat(compat...), WithPublicKeys("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAexample\n-----END PUBLIC KEY-----\n"))...); err != nil {
		t.Fatal(err)
	}
	writeStubs(t, root, append([]string{"index.yaml", "keys/index.pub", "evidence/x/arch=amd64,kubernetes=1.33.intoto.json", "evidence/x/arch=arm64,kubernetes=1.34.intoto.json"}, publishedFiles...))
	return root
}

// writeStubs writes "{}" to each of files under dir: what the pages link
// and the test does not look into.
func writeStubs(t *testing.T, dir string, files []string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// setIndex is testIndex with a release set, virt-stack 1.0.0 build 1,
// pinning kubevirt 1.9.0 build 4 and cdi 1.66.1 build 1; it returns the
// index and the set's digest.
func setIndex(t *testing.T) (*index.RepositoryIndex, string) {
	t.Helper()
	idx := testIndex(t)
	stack := spec.PackageSpec{Version: "1.0.0", Build: 1, Variants: []spec.Variant{{Requires: []spec.Requirement{
		{Package: "kubevirt", Version: index.ExactBuild("1.9.0", 4)},
		{Package: "cdi", Version: index.ExactBuild("1.66.1", 1)},
	}}}}
	idx.Packages["virt-stack"] = &index.IndexPackage{Description: "KubeVirt with CDI, tested together", Versions: []index.IndexVersion{version(t, stack)}}
	var members []index.SetMember
	for _, m := range []struct {
		name, version string
		build         int
	}{{"cdi", "1.66.1", 1}, {"kubevirt", "1.9.0", 4}} {
		members = append(members, index.SetMember{Package: m.name, Version: m.version, Build: m.build, Digest: idx.Find(m.name, m.version, m.build).Digest})
	}
	setDigest := index.ComputeSetDigest(members)
	idx.Sets = []index.SetDigest{{Package: "virt-stack", Version: "1.0.0", Build: 1, Digest: setDigest, Members: members}}
	return idx, setDigest
}

// setMatrices are the matrices of the set of setIndex (phases listed,
// "supported in testing" when the suites are named) and of cdi (result
// only), rows held by the suites names (none without suites).
func setMatrices(idx *index.RepositoryIndex, setDigest string, names []string) []Matrix {
	var supported []string
	if len(names) > 0 {
		supported = []string{"testing"}
	}
	cell := func(result, k8s, arch string, passed, failed []string) MatrixCell {
		return MatrixCell{Result: result, File: "evidence/x/arch=" + arch + ",kubernetes=" + k8s + ".intoto.json", Env: map[string]string{"kubernetes": k8s, "arch": arch, "runtime": "containerd"}, Phases: PhasesOf(passed, failed)}
	}
	return []Matrix{
		{Package: "cdi", Envs: []string{"arch=amd64,kubernetes=1.33"}, Rows: []MatrixRow{{Version: "1.66.1", Build: 1, Digest: idx.Find("cdi", "1.66.1", 1).Digest, Suites: names,
			Cells: []MatrixCell{{Result: "pass", File: "evidence/x/arch=amd64,kubernetes=1.33.intoto.json", Env: map[string]string{"kubernetes": "1.33", "arch": "amd64"}}}}}},
		{Package: "virt-stack", Set: true, Envs: []string{"arch=amd64,kubernetes=1.33", "arch=arm64,kubernetes=1.34", "arch=s390x,kubernetes=1.32"}, Rows: []MatrixRow{{Version: "1.0.0", Build: 1, Digest: setDigest, Suites: names, Supported: supported,
			Cells: []MatrixCell{
				cell("pass", "1.33", "amd64", []string{"install", "upgrade from 0.9.0", "rollback", "uninstall"}, nil),
				cell("fail", "1.34", "arm64", []string{"install"}, []string{"upgrade from 0.9.0"}),
				{Result: Untested},
			}}}},
	}
}

// probeJS measures a page as a phone or desktop shows it, after search.js
// ran: how far the document is wider than the window, which tables are
// wider than their box (so a row is cut off or needs scrolling), how many
// copy buttons there are, and what the first one copies (the Clipboard
// API and execCommand are watched, not replaced in what they receive).
const probeJS = `(function () {
  "use strict";
  var out = {width: window.innerWidth, overflow: document.documentElement.scrollWidth - window.innerWidth, wide: []};
  document.querySelectorAll("table.stack, table.compat").forEach(function (t) {
    if (t.scrollWidth > t.parentElement.clientWidth + 1) {
      out.wide.push(t.className + " " + t.scrollWidth + ">" + t.parentElement.clientWidth);
    }
  });
  out.offenders = [];
  document.querySelectorAll("body *").forEach(function (el) {
    var inScroller = el.closest(".table-scroll, pre");
    if (!inScroller && el.getBoundingClientRect().right > window.innerWidth + 1 && out.offenders.length < 5) {
      out.offenders.push(el.tagName.toLowerCase() + "." + el.className + " " + (el.textContent || "").slice(0, 40));
    }
  });
  var buttons = document.querySelectorAll("button.copy");
  out.buttons = buttons.length;
  out.snippets = document.querySelectorAll("pre.code").length;
  if (navigator.clipboard) {
    navigator.clipboard.writeText = function (text) { out.copied = text; return Promise.resolve(); };
  }
  var exec = document.execCommand.bind(document);
  document.execCommand = function (cmd) {
    if (cmd === "copy") { out.copied = document.activeElement && document.activeElement.value; return true; }
    return exec.apply(null, arguments);
  };
  if (buttons.length > 0) {
    buttons[0].click();
    out.pre = buttons[0].parentNode.querySelector("pre").textContent;
  }
  out.html = document.documentElement.outerHTML;
  var el = document.createElement("pre");
  el.id = "probe";
  el.textContent = JSON.stringify(out);
  document.body.appendChild(el);
})();`

type probe struct {
	Width, Overflow, Buttons, Snippets int
	Wide, Offenders                    []string
	Copied, Pre, HTML                  string
}

var probeRE = regexp.MustCompile(`(?s)<pre id="probe">(.*?)</pre>`)

// phoneHTML shows the page at the path given in an iframe as wide as a
// phone (or a desktop) and copies its probe's result out: headless
// Chromium keeps its window at least 500 px wide, while an iframe's
// viewport, which media queries read, is exactly its width.
const phoneHTML = `<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body style="margin:0">
<iframe id="frame" src="%s%s" width="%d" height="844" style="border:0;display:block"></iframe>
<script>
document.getElementById("frame").addEventListener("load", function () {
  var p = this.contentDocument.getElementById("probe");
  var out = document.createElement("pre");
  out.id = "probe";
  out.textContent = p ? p.textContent : "";
  document.body.appendChild(out);
});
</script></body></html>`

// withProbe serves h, adding probe.js (deferred, after search.js) to the
// HTML pages asked for with ?probe, and phone.html?w=WIDTH&path=PAGE.
func withProbe(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/phone.html" {
			w.Header().Set("Content-Type", "text/html")
			q := r.URL.Query()
			probe := "?probe"
			if q.Has("shot") {
				probe = "" // a screenshot: the page as a reader sees it
			}
			fmt.Fprintf(w, phoneHTML, html.EscapeString(q.Get("path")), probe, atoi(q.Get("w")))
			return
		}
		if strings.HasSuffix(r.URL.Path, "/probe.js") {
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, probeJS)
			return
		}
		if !r.URL.Query().Has("probe") {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		depth := strings.Count(strings.TrimPrefix(r.URL.Path, "/"), "/") // under StripPrefix("/repo")
		body := bytes.Replace(rec.Body.Bytes(), []byte("</body>"), []byte(`<script src="`+strings.Repeat("../", depth)+`probe.js" defer></script></body>`), 1)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(body)
	})
}

// TestBrowserCompat loads, in headless Chromium at a desktop's and a
// phone's width, the compatibility matrix of a release set, the set's
// page, a member's page and the page of suites: each names its suite and
// links back, links the matrix, has copy buttons that copy the snippet,
// and nothing is cut off or wider than the screen (image references and
// digests wrap on a phone).
func TestBrowserCompat(t *testing.T) {
	root := setSite(t)
	h, err := NewHandler(root)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, http.StripPrefix("/repo", withProbe(h)))
	pages := []pageWant{
		{"/repo/compat/virt-stack.html", []string{
			`<h1>virt-stack <span class="build">compatibility</span> <span class="badge set">release set</span></h1>`,
			`<a href="../index.html">All suites</a>`,
			`<span class="badge suite"><a href="../testing/packages/virt-stack.html#v1.0.0-1">testing</a></span> <span class="badge supported">supported in testing</span>`,
			`<tr class="result-pass"><td data-label="Kubernetes">1.33</td><td data-label="Arch">amd64</td><td data-label="Other">runtime=containerd</td><td data-label="Result"><span class="badge result pass"><a href="../evidence/x/arch=amd64,kubernetes=1.33.intoto.json">pass</a></span></td><td data-label="Phases"><span class="badge phase passed">install ✓</span> <span class="badge phase passed">upgrade from 0.9.0 ✓</span> <span class="badge phase passed">rollback ✓</span> <span class="badge phase passed">uninstall ✓</span> </td></tr>`,
			`<span class="badge phase failed">upgrade from 0.9.0 ✗</span>`,
			`<td data-label="Kubernetes">1.32</td><td data-label="Arch">s390x</td><td data-label="Other"></td><td data-label="Result"><span class="badge result untested">untested</span></td><td data-label="Phases"><span class="none">no evidence</span></td>`,
		}, nil},
		{"/repo/compat/cdi.html", []string{`<td data-label="Phases"><span class="none">result only</span></td>`}, nil},
		{"/repo/testing/packages/virt-stack.html", []string{
			`<a class="suite-name" href="../index.html">suite testing</a>`,
			`<a href="../../index.html">All suites</a> <span aria-hidden="true">/</span> <a href="../index.html">testing: all packages</a>`,
			`<span class="badge set">release set</span>`,
			`<a href="../../compat/virt-stack.html">virt-stack</a>`,
			`<a href="../../compat/virt-stack.html#v1.0.0-1">Test evidence and compatibility of this version</a>`,
			`<a href="kubevirt.html#v1.9.0-4">kubevirt</a> <code>1.9.0</code>`,
			`<code class="ref">quay.io/kubevirt/virt-api:v1.9.0</code><br><code class="digest">sha256:42341b1d52699f4bb87f3996151bafe2e3fe065e9146cc64a15959ddf7bf2c69</code>`,
			`Key files: <a href="../keys/index.pub">keys/index.pub</a>`,
		}, nil},
		{"/repo/unstable/packages/kubevirt.html", []string{
			`<a class="suite-name" href="../index.html">suite unstable</a>`,
			`<a href="../../compat/virt-stack.html">release set virt-stack</a>`,
			`no <code>helm repo add</code> is needed`,
		}, nil},
		{"/repo/unstable/packages/cdi.html", []string{`<a href="../../compat/cdi.html">cdi</a> · <a href="../../compat/virt-stack.html">release set virt-stack</a>`}, nil},
		{"/repo/testing/index.html", []string{`<a class="suite-name" href="index.html">suite testing</a>`, `<a href="../index.html">All suites</a>`, `<li><a href="../compat/virt-stack.html">virt-stack</a></li>`}, nil},
		{"/repo/index.html", []string{`<li><a href="compat/virt-stack.html">virt-stack</a></li>`}, nil},
	}
	browsePages(t, b, pages, "compat-", "/repo/compat/virt-stack.html", "/repo/testing/packages/virt-stack.html")
}

// TestBrowserCompatRoot is TestBrowserCompat for a site without suites
// (no suites.yaml): the matrices beside the one catalog at the site root
// are linked from its package list, the set's page and its members'
// pages; the matrix links back to the catalog and each row to the
// version's package page, names no suite, and is readable at 1280 and
// 390 px.
func TestBrowserCompatRoot(t *testing.T) {
	root := rootCompatSite(t)
	h, err := NewHandler(root)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, http.StripPrefix("/repo", withProbe(h)))
	pages := []pageWant{
		{"/repo/compat/virt-stack.html", []string{
			`<h1>virt-stack <span class="build">compatibility</span> <span class="badge set">release set</span></h1>`,
			`<a href="../index.html">All packages</a> <span aria-hidden="true">/</span> compatibility`,
			`<dt>Published</dt><dd><a href="../packages/virt-stack.html#v1.0.0-1">virt-stack 1.0.0 build 1</a> in the signed index</dd>`,
			`<a href="../evidence/x/arch=amd64,kubernetes=1.33.intoto.json">pass</a>`,
			`<span class="badge phase failed">upgrade from 0.9.0 ✗</span>`,
			`<a href="../index.yaml">index.yaml</a>`,
		}, []string{`<dt>Suites</dt>`, `supported in`}},
		{"/repo/compat/cdi.html", []string{`<a href="../packages/cdi.html#v1.66.1-1">cdi 1.66.1 build 1</a>`, `<td data-label="Phases"><span class="none">result only</span></td>`}, nil},
		{"/repo/packages/virt-stack.html", []string{
			`<span class="badge set">release set</span>`,
			`<a href="../compat/virt-stack.html">virt-stack</a>`,
			`<a href="../compat/virt-stack.html#v1.0.0-1">Test evidence and compatibility of this version</a>`,
			`<a href="kubevirt.html#v1.9.0-4">kubevirt</a> <code>1.9.0</code>`,
		}, []string{`../../compat/`}},
		{"/repo/packages/kubevirt.html", []string{`<a href="../compat/virt-stack.html">release set virt-stack</a>`}, nil},
		{"/repo/packages/cdi.html", []string{`<a href="../compat/cdi.html">cdi</a> · <a href="../compat/virt-stack.html">release set virt-stack</a>`}, nil},
		{"/repo/index.html", []string{
			`<h2 id="compat-heading">Compatibility</h2>`,
			`<li><a href="compat/cdi.html">cdi</a></li><li><a href="compat/virt-stack.html">virt-stack</a></li>`,
		}, []string{`All suites`}},
	}
	browsePages(t, b, pages, "compat-root-", "/repo/compat/virt-stack.html", "/repo/index.html")
}

// pageWant is a page and what its DOM must and must not hold.
type pageWant struct {
	path          string
	want, notWant []string
}

// browsePages loads each page in headless Chromium at 1280 and 390 px:
// its DOM holds what it must and nothing it must not, nothing logs to
// the console, fails to load or is wider than the window, and every
// snippet's copy button copies it. The pages shots are screenshot into
// outputDir as <prefix><page>-<width>.png.
func browsePages(t *testing.T, b *browser, pages []pageWant, prefix string, shots ...string) {
	t.Helper()
	for _, w := range []string{"1280,900", "390,844"} {
		width := strings.Split(w, ",")[0]
		for _, p := range pages {
			t.Run(width+p.path, func(t *testing.T) {
				dom, console := b.run("/repo/phone.html?w="+width+"&path="+p.path, "--dump-dom", "--window-size="+w)
				if len(console) > 0 {
					t.Errorf("console messages while loading %s:\n%s", p.path, strings.Join(console, "\n"))
				}
				m := probeRE.FindStringSubmatch(dom)
				if m == nil {
					t.Fatalf("the probe did not run on %s", p.path)
				}
				var pr probe
				if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &pr); err != nil {
					t.Fatal(err)
				}
				for _, want := range p.want {
					if !strings.Contains(pr.HTML, want) {
						t.Errorf("DOM of %s lacks %q", p.path, want)
					}
				}
				for _, bad := range p.notWant {
					if strings.Contains(pr.HTML, bad) {
						t.Errorf("DOM of %s holds %q", p.path, bad)
					}
				}
				if pr.Width != atoi(width) {
					t.Errorf("window width %d, want %s", pr.Width, width)
				}
				if pr.Overflow > 0 || len(pr.Wide) > 0 {
					t.Errorf("%s at %s px: the page is %d px wider than the window (%q); tables wider than their box: %v", p.path, width, pr.Overflow, pr.Offenders, pr.Wide)
				}
				if pr.Buttons != pr.Snippets {
					t.Errorf("%s: %d copy buttons for %d snippets", p.path, pr.Buttons, pr.Snippets)
				}
				if pr.Buttons > 0 && (pr.Copied == "" || pr.Copied != pr.Pre) {
					t.Errorf("%s: the first copy button copied %q, want its snippet %q", p.path, pr.Copied, pr.Pre)
				}
			})
		}
		for _, p := range shots {
			png := filepath.Join(outputDir(t), prefix+strings.NewReplacer("/", "_").Replace(strings.TrimPrefix(p, "/repo/"))+"-"+width+".png")
			os.Remove(png)
			if _, console := b.run("/repo/phone.html?shot&w="+width+"&path="+p, "--screenshot="+png, "--window-size="+w); len(console) > 0 {
				t.Errorf("console messages at %s: %s", w, strings.Join(console, "\n"))
			}
			if fi, err := os.Stat(png); err != nil || fi.Size() < 10000 {
				t.Errorf("screenshot %s at %s: %v (size %d); want a rendered page", p, w, err, sizeOf(fi))
			}
		}
	}
	b.mu.Lock()
	bad := b.bad
	b.mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("the browser requested resources that failed:\n%s", strings.Join(bad, "\n"))
	}
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}
