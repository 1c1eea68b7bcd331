package site

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kbuild.dev/kbuild/index"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func writeSite(t *testing.T, opts ...Option) string {
	t.Helper()
	dir := t.TempDir()
	if err := Write(dir, testIndex(t), opts...); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return dir
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGolden pins the generated pages byte for byte; run
// `go test ./site -run Golden -update` after an intended change and review
// the diff.
func TestGolden(t *testing.T) {
	dir := writeSite(t, testOptions()...)
	for _, name := range []string{"index.html", "packages/kubevirt.html", "packages/evil.html"} {
		t.Run(name, func(t *testing.T) {
			got := readFile(t, dir, name)
			golden := filepath.Join("testdata", strings.ReplaceAll(name, "/", "_")+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s; run with -update and review the diff", name, golden)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	a := writeSite(t, testOptions()...)
	b := writeSite(t, testOptions()...)
	want := Files(testIndex(t))
	var got []string
	filepath.WalkDir(a, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			r, _ := filepath.Rel(a, p)
			got = append(got, filepath.ToSlash(r))
		}
		return err
	})
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Write wrote %v, want %v (Files)", got, want)
	}
	for _, f := range want {
		if readFile(t, a, f) != readFile(t, b, f) {
			t.Errorf("%s differs between two runs on the same index", f)
		}
		fi, err := os.Stat(filepath.Join(a, f))
		if err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, %v; want 0644", f, fi.Mode(), err)
		}
	}
}

// TestKeepsOtherFiles checks Write replaces its own files and leaves
// everything else in the directory, including a page of a package that is
// no longer in the index.
func TestKeepsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	others := map[string]string{
		"index.yaml":            "apiVersion: kubepkg.dev/v1alpha1\n",
		"packages/old.html":     "old",
		"sbom/x.cdx.json":       "{}",
		"packages/kubevirt.txt": "notes",
	}
	for name, body := range others {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("stale"), 0o600)
	if err := Write(dir, testIndex(t)); err != nil {
		t.Fatal(err)
	}
	for name, body := range others {
		if got := readFile(t, dir, name); got != body {
			t.Errorf("%s = %q after Write, want %q untouched", name, got, body)
		}
	}
	if got := readFile(t, dir, "index.html"); !strings.HasPrefix(got, "<!DOCTYPE html>") {
		t.Errorf("index.html was not replaced: %.40q", got)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, "*", ".*.tmp-*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestWriteRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		idx  *index.RepositoryIndex
		want string
	}{
		{"nil index", nil, "no index"},
		{"path in package name", &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{"../x": {}}}, `"../x" is not a DNS-1123 label`},
		{"upper case package name", &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{"Kubevirt": {}}}, `"Kubevirt" is not a DNS-1123 label`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			err := Write(dir, tc.idx)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Write = %v, want an error containing %q", err, tc.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("Write wrote %d entries before failing, want none", len(entries))
			}
		})
	}
}

// TestContent checks what each page must say, table-driven over pages.
func TestContent(t *testing.T) {
	dir := writeSite(t, testOptions()...)
	for _, tc := range []struct {
		page        string
		want, avoid []string
	}{
		{
			page: "index.html",
			want: []string{
				`<a class="pkg-name" href="packages/kubevirt.html">kubevirt</a>`,
				`<span class="ver">1.9.0</span> <span class="build">build 4</span>`,
				`3 versions`,
				`<code>api:kubevirt.io/v1</code>`,
				`<code>cdi &gt;=1.60.0 &lt;2.0.0 (optional)</code>`,
				`<summary>4 CRDs</summary>`,
				`<span class="badge rollback-unsafe">unsafe</span>`,
				`<span class="badge rollback-safe">safe</span>`,
				`<span class="badge rollback-unknown">not declared</span>`,
				`Index expires <time class="expires" datetime="2026-12-28T12:00:00Z">2026-12-28 12:00 UTC</time>`,
				`generated <time datetime="2026-11-28T12:00:00Z">2026-11-28 12:00 UTC</time>`,
				`<p class="desc">&lt;script&gt;alert(1)&lt;/script&gt;</p>`,
				`<span class="site-url" data-rel="index.yaml">SITE_URL/index.yaml</span>`,
				`name: example-virtualization`,
				`<a href="index.yaml">index.yaml</a> · <a href="index.yaml.sig">index.yaml.sig</a> · <a href="scan.json">scan.json</a>`,
			},
			avoid: []string{"<script>alert", "root.yaml", "days", "http://", "https://"},
		},
		{
			page: "packages/kubevirt.html",
			want: []string{
				`<a href="../index.html">All packages</a>`,
				`<a href="https://kubevirt.io" rel="nofollow noopener">https://kubevirt.io</a>`,
				`<code class="ref">oci://ghcr.io/example/kubevirt/kubevirt-operator:1.9.0-4</code>`,
				`<code class="digest">` + operatorArchive + `</code>`,
				`<code class="ref">oci://ghcr.io/example/kubevirt/kubevirt-operator@` + operatorManifest + `</code>`,
				`helm install kubevirt-operator oci://ghcr.io/example/kubevirt/kubevirt-operator --version 1.9.0-4 --namespace kubevirt --create-namespace`,
				`helm install kubevirt-operator oci://ghcr.io/example/kubevirt/kubevirt-operator@` + operatorManifest + ` --namespace kubevirt --create-namespace`,
				`helm install cr oci://ghcr.io/example/kubevirt/kubevirt-cr --version 1.9.0-4 --namespace kubevirt --create-namespace`,
				`<code class="ref">quay.io/kubevirt/virt-api:v1.9.0</code></td><td><code class="digest">sha256:42341b1d52699f4bb87f3996151bafe2e3fe065e9146cc64a15959ddf7bf2c69</code>`,
				"kind: Repository\nmetadata:\n  name: example-virtualization\nspec:\n  url: <span class=\"site-url\" data-rel=\"../index.yaml\">SITE_URL/index.yaml</span>",
				"kind: Package\nmetadata:\n  name: kubevirt\nspec:\n  version: 1.9.0\n  repository: example-virtualization</code>",
				`<a href="../sbom/kubevirt-1.9.0-4.cdx.json">SBOM (CycloneDX)</a>`,
				`<a href="../provenance/kubevirt-1.9.0-4.intoto.json">Provenance (in-toto)</a>`,
				`<a href="../scan.json">Vulnerability scan</a>`,
				`<code>get,list,watch on nodes, pods</code>`,
				`<code>* on kubevirt.io/*</code>`,
				`<span class="badge warn">cluster-wide</span>`,
				`<section class="version" id="v1.9.0-4">` + "\n<details open>",
				`<section class="version" id="v1.9.0-3">` + "\n<details>",
				`Installed after operator.`,
			},
			// Older builds have no SBOM and no known manifest digest.
			avoid: []string{"kubevirt-1.9.0-3.cdx.json", "kubevirt-1.8.2-1.intoto.json", "kubevirt-cr@sha256"},
		},
		{
			page: "packages/evil.html",
			want: []string{
				`<p class="lead">&lt;script&gt;alert(1)&lt;/script&gt;</p>`,
				`Home page: <code>javascript:alert(5)</code>`,
				`helm install &#39;c&#34;&gt;&lt;script&gt;alert(4)&lt;/script&gt;&#39; oci://ghcr.io/example/evil/evil --version 0.1.0-1`,
				`&lt;b onmouseover=&#34;alert(2)&#34;&gt;x&lt;/b&gt;`,
				`&lt;img src=x onerror=alert(3)&gt;`,
				`c&#34;&gt;&lt;script&gt;alert(4)&lt;/script&gt;`,
			},
			avoid: []string{"<script>alert", `href="javascript:`, "ZgotmplZ", "<img src=x", "<b onmouseover"},
		},
	} {
		t.Run(tc.page, func(t *testing.T) {
			got := readFile(t, dir, tc.page)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s lacks %q", tc.page, w)
				}
			}
			for _, a := range tc.avoid {
				if strings.Contains(got, a) {
					t.Errorf("%s contains %q", tc.page, a)
				}
			}
		})
	}
}

func TestVersionOrder(t *testing.T) {
	idx := testIndex(t)
	dir := t.TempDir()
	if err := Write(dir, idx); err != nil {
		t.Fatal(err)
	}
	if v := idx.Packages["kubevirt"].Versions[0]; v.Version != "1.8.2" {
		t.Errorf("Write reordered its input: first version is now %s, want 1.8.2 as given", v.Version)
	}
	got := readFile(t, dir, "packages/kubevirt.html")
	ids := regexp.MustCompile(`<section class="version" id="([^"]+)">`).FindAllStringSubmatch(got, -1)
	var order []string
	for _, m := range ids {
		order = append(order, m[1])
	}
	if want := "v1.9.0-4 v1.9.0-3 v1.8.2-1"; strings.Join(order, " ") != want {
		t.Errorf("versions = %v, want %s (newest first)", order, want)
	}
}

func TestBaseURL(t *testing.T) {
	dir := writeSite(t, withBaseURL("https://org.github.io/repo/"))
	for _, page := range []string{"index.html", "packages/cdi.html"} {
		got := readFile(t, dir, page)
		if !strings.Contains(got, "  url: https://org.github.io/repo/index.yaml") {
			t.Errorf("%s: snippet lacks url: https://org.github.io/repo/index.yaml", page)
		}
		if strings.Contains(got, "SITE_URL") {
			t.Errorf("%s still shows the SITE_URL placeholder", page)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"kubevirt-operator", "kubevirt-operator"},
		{"oci://ghcr.io/x/y@sha256:ab", "oci://ghcr.io/x/y@sha256:ab"},
		{"1.0.0+build.1", "1.0.0+build.1"},
		{"a b", "'a b'"},
		{"$(rm -rf ~)", "'$(rm -rf ~)'"},
		{"it's", `'it'\''s'`},
		{"", "''"},
	} {
		if got := shellQuote(tc.in); got != tc.want {
			t.Errorf("shellQuote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestYAMLName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"kubepkg repository", "kubepkg-repository"},
		{"  Example -- Virtualization!", "example-virtualization"},
		{"", "packages"},
		{"!!!", "packages"},
		{strings.Repeat("a", 62) + " b", strings.Repeat("a", 62)},
	} {
		if got := yamlName(tc.in); got != tc.want {
			t.Errorf("yamlName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEmptyIndex(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{"nil-entry": nil}}); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, dir, "index.html")
	for _, w := range []string{"<span class=\"none\">no versions</span>", "This index does not expire", "1 package,"} {
		if !strings.Contains(got, w) {
			t.Errorf("index.html of an empty index lacks %q", w)
		}
	}
	if bytes.Contains([]byte(got), []byte("generated <time")) {
		t.Errorf("index.html shows a generated time for a zero time")
	}
}

// withBaseURL sets the absolute URL the site is published at, so that the
// kubepkg Repository snippet names it instead of SITE_URL (the page's own
// location, which search.js fills in).
func withBaseURL(u string) Option {
	return func(o *options) { o.baseURL = strings.TrimSuffix(u, "/") }
}
