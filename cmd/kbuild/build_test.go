package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/testenv"
)

// uniqueRepo returns a registry path no other test run uses.
func uniqueRepo(t testing.TB, reg string) string {
	b := make([]byte, 4)
	rand.Read(b)
	return "oci://" + reg + "/t" + hex.EncodeToString(b)
}

func readRecords(t *testing.T, dir string) []dist.Build {
	t.Helper()
	builds, err := dist.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return builds
}

// TestBuildExamplesRegistry builds the bundled examples into the real
// registry, inspects the media types with skopeo, then pulls every chart
// back by digest with each real helm CLI (Helm 3 and 4), renders it with
// helm template and checks it with helm lint.
func TestBuildExamplesRegistry(t *testing.T) {
	reg := testenv.Registry(t)
	helms := testenv.Helms(t)
	skopeo := testenv.Tool(t, "skopeo")
	base := uniqueRepo(t, reg)
	out := t.TempDir()
	r := kbuild(t, repoRoot, []string{"SOURCE_DATE_EPOCH=1700000000"}, "build", "examples/", "--registry", base, "--plain-http", "-o", out, "--cache-dir", t.TempDir())
	if r.code != 0 {
		t.Fatalf("kbuild build: %s", r)
	}
	builds := readRecords(t, out)
	if len(builds) != 3 {
		t.Fatalf("%d build records, want 3 (smart-proxy, virt-stack, virt-template): %s", len(builds), r)
	}
	charts := 0
	var pushed []pushedChart
	for _, b := range builds {
		if b.Info == nil {
			t.Fatalf("%s has no BuildInfo sidecar", b.File)
		}
		if b.Record.Metadata.Name == "virt-stack" {
			if len(b.Info.Charts) != 0 {
				t.Errorf("meta package virt-stack pushed charts: %v", b.Info.Charts)
			}
			continue
		}
		for _, c := range b.Info.Charts {
			charts++
			ref := strings.TrimPrefix(c.Ref, "oci://")
			repo := ref[:strings.LastIndex(ref, ":")]
			pushed = append(pushed, pushedChart{b.Record.Metadata.Name, repo, c.Manifest, c.Digest})
			// The record's component points at the same archive.
			found := false
			for _, v := range b.Record.Spec.Variants {
				for _, comp := range v.Components {
					if comp.Chart != nil && comp.Chart.Name == c.Name {
						found = comp.Chart.Digest == c.Digest && comp.Path == "" && strings.HasPrefix(comp.Chart.Repository, base+"/")
					}
				}
			}
			if !found {
				t.Errorf("%s: no component points at chart %s with digest %s: %+v", b.File, c.Name, c.Digest, b.Record.Spec.Variants)
			}
			raw, err := exec.Command(skopeo, "inspect", "--raw", "--tls-verify=false", "docker://"+ref).Output()
			if err != nil {
				t.Fatalf("skopeo inspect %s: %v", ref, err)
			}
			var m struct {
				MediaType string
				Config    struct{ MediaType string }
				Layers    []struct{ MediaType, Digest string }
			}
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			if m.MediaType != "application/vnd.oci.image.manifest.v1+json" || m.Config.MediaType != "application/vnd.cncf.helm.config.v1+json" ||
				len(m.Layers) != 1 || m.Layers[0].MediaType != "application/vnd.cncf.helm.chart.content.v1.tar+gzip" || m.Layers[0].Digest != c.Digest {
				t.Errorf("skopeo inspect --raw %s = %s", ref, raw)
			}
		}
	}
	if charts != 2 {
		t.Errorf("%d charts pushed, want 2", charts)
	}
	for _, h := range helms {
		t.Run(h.Name, func(t *testing.T) {
			for _, c := range pushed {
				pullTemplateLint(t, h.Path, c)
			}
		})
	}

	// Building again reuses every tag and says so.
	r = kbuild(t, repoRoot, []string{"SOURCE_DATE_EPOCH=1700000000"}, "build", "examples/", "--registry", base, "--plain-http", "-o", t.TempDir(), "--cache-dir", t.TempDir())
	if r.code != 0 || strings.Count(r.stderr, "already published with the same content; reused") != 2 {
		t.Fatalf("second build: %s", r)
	}
	// The same version built with other content is refused.
	r = kbuild(t, repoRoot, []string{"SOURCE_DATE_EPOCH=1700000001"}, "build", "examples/smart-proxy", "--registry", base, "--plain-http", "-o", t.TempDir(), "--cache-dir", t.TempDir())
	if r.code == 0 || !strings.Contains(r.stdout, "already published with different content; published versions do not change, give the recipe a new build number") {
		t.Fatalf("rebuild with other content: %s", r)
	}
}

// checkRendered checks what helm template made of an example chart.
func checkRendered(t *testing.T, pkg, out string) {
	t.Helper()
	switch pkg {
	case "smart-proxy":
		for _, want := range []string{"replicas: 2", "image: \"quay.io/foreman/foreman-proxy:nightly@sha256:244c756844a137990779ad153998c426eb0326d8d6f376192ea6e84947affd47\""} {
			if !strings.Contains(out, want) {
				t.Errorf("smart-proxy renders without %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "curlimages") {
			t.Errorf("smart-proxy still has the removed test pod")
		}
	case "virt-template":
		for _, want := range []string{`template.kubevirt.io/name-format: "{{ .Name }}-{{ .Index }}"`, "replicas: 2", "cpu: 10m", "app.kubernetes.io/part-of: kubevirt", "kind: CustomResourceDefinition", "name: kube-rbac-proxy"} {
			if !strings.Contains(out, want) {
				t.Errorf("virt-template renders without %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "kind: Namespace") {
			t.Errorf("virt-template still has the excluded Namespace")
		}
	}
}

// TestBuildReproducible builds the examples in two separate processes, from
// two working directories, with different TZ, umask, HOME and cache dirs:
// archives, OCI manifests and build records must be identical.
func TestBuildReproducible(t *testing.T) {
	type run struct{ records, manifests map[string]string }
	build := func(tz, umask string) run {
		work := t.TempDir()
		if err := copyDir(filepath.Join(repoRoot, "examples"), filepath.Join(work, "recipes")); err != nil {
			t.Fatal(err)
		}
		home := t.TempDir()
		cmd := exec.Command("sh", "-c", "umask "+umask+" && exec \"$0\" \"$@\"", kbuildBin, "build", "recipes/", "-o", "out", "--cache-dir", filepath.Join(home, "cache"))
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "TZ="+tz, "HOME="+home, "SOURCE_DATE_EPOCH=1700000000", "XDG_CACHE_HOME="+filepath.Join(home, "xdg"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
		r := run{map[string]string{}, map[string]string{}}
		files, _ := filepath.Glob(filepath.Join(work, "out", "*.yaml"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			r.records[filepath.Base(f)] = string(data)
		}
		idx, err := os.ReadFile(filepath.Join(work, "out", "oci", "index.json"))
		if err != nil {
			t.Fatal(err)
		}
		var ii struct {
			Manifests []struct {
				Digest      string
				Annotations map[string]string
			}
		}
		json.Unmarshal(idx, &ii)
		for _, m := range ii.Manifests {
			r.manifests[m.Annotations["org.opencontainers.image.ref.name"]] = m.Digest
		}
		return r
	}
	a := build("UTC", "022")
	b := build("Asia/Kolkata", "077")
	if len(a.records) != 6 || len(a.manifests) != 2 {
		t.Fatalf("first build wrote %d records and %d manifests, want 6 (3 records, 3 sidecars) and 2", len(a.records), len(a.manifests))
	}
	for name, rec := range a.records {
		if b.records[name] != rec {
			t.Errorf("%s differs between the builds:\n%s\n---\n%s", name, rec, b.records[name])
		}
	}
	for ref, d := range a.manifests {
		if b.manifests[ref] != d {
			t.Errorf("manifest of %s differs: %s vs %s", ref, d, b.manifests[ref])
		}
	}
}

func copyDir(src, dst string) error {
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, fi.Mode().Perm())
	})
}

// tgz builds a .tar.gz in memory from entries.
func tgz(t *testing.T, entries []tar.Header, bodies map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range entries {
		h := h
		body := bodies[h.Name]
		if h.Typeflag == tar.TypeReg || h.Typeflag == 0 {
			h.Size = int64(len(body))
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

const goodManifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  a: "1"
`

// recipeYAML returns a recipe whose one chart is made of the given sources.
func recipeYAML(sources, chartExtra, pkgExtra string) string {
	return `apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: demo
  annotations:
    kubepkg.dev/description: demo
spec:
  version: 1.0.0
  build: 1
  sources:
` + sources + `
  charts:
    demo:
      from: [upstream]
` + chartExtra + `
  package:
    rollback: {safe: true}
` + pkgExtra + `
    variants:
      - name: default
        components:
          - {name: demo, path: demo}
`
}

// TestBuildBadInput runs kbuild build on one bad recipe at a time: each must
// fail with a message that says what is wrong, and leave nothing in dist/
// or the registry.
func TestBuildBadInput(t *testing.T) {
	reg := testenv.Registry(t)
	files := map[string][]byte{
		"/ok.yaml":     []byte(goodManifest),
		"/dotdot.tgz":  tgz(t, []tar.Header{{Name: "pkg/../../evil.yaml", Typeflag: tar.TypeReg}}, map[string]string{"pkg/../../evil.yaml": goodManifest}),
		"/abs.tgz":     tgz(t, []tar.Header{{Name: "/etc/evil.yaml", Typeflag: tar.TypeReg}}, map[string]string{"/etc/evil.yaml": goodManifest}),
		"/symlink.tgz": tgz(t, []tar.Header{{Name: "pkg/", Typeflag: tar.TypeDir, Mode: 0o755}, {Name: "pkg/evil.yaml", Typeflag: tar.TypeSymlink, Linkname: "../../../etc/passwd"}}, nil),
		"/big.yaml":    bytes.Repeat([]byte("# padding\n"), 300_000),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	defer srv.Close()
	url := func(name string) string { return srv.URL + name }
	urlSource := func(name, extra string) string {
		return fmt.Sprintf("    upstream:\n      url: %s\n      sha256: %s\n%s", url(name), sha(files[name]), extra)
	}
	good := urlSource("/ok.yaml", "")
	const pin = "    images: [\"quay.io/kubevirt/virt-operator:v1.9.0@sha256:d08b5b5ad1c0d694fad13279e44b44b6fad961aa7508acd53b87ce6ef468cbae\"]\n"

	for _, tc := range []struct {
		name   string
		recipe string
		files  map[string]string // extra files in the recipe dir
		args   []string
		want   []string
	}{
		{name: "unknown field", recipe: strings.Replace(recipeYAML(good, "", ""), "  build: 1\n", "  build: 1\n  colour: blue\n", 1),
			want: []string{"line 10: spec.colour: unknown field \"colour\""}},
		{name: "wrong kind", recipe: strings.Replace(recipeYAML(good, "", ""), "kind: Recipe", "kind: Package", 1),
			want: []string{`kind: expected "Recipe", got "Package"`}},
		{name: "non-semver version", recipe: strings.Replace(recipeYAML(good, "", ""), "version: 1.0.0", "version: latest", 1),
			want: []string{`"latest" is not an exact semver version`}},
		{name: "build 0", recipe: strings.Replace(recipeYAML(good, "", ""), "build: 1", "build: 0", 1),
			want: []string{"build must be 1 or more, got 0"}},
		{name: "from names no source", recipe: strings.Replace(recipeYAML(good, "", ""), "from: [upstream]", "from: [upstraem]", 1),
			want: []string{`no source named "upstraem"`}},
		{name: "path escaping the recipe dir", recipe: recipeYAML("    upstream:\n      dir: ../..\n", "", ""),
			want: []string{`"../.." leaves the recipe directory`}},
		{name: "tarball with ..", recipe: recipeYAML(urlSource("/dotdot.tgz", "      path: pkg\n"), "", ""),
			want: []string{"pkg/../../evil.yaml"}},
		{name: "tarball with absolute path", recipe: recipeYAML(urlSource("/abs.tgz", "      path: etc\n"), "", ""),
			want: []string{"/etc/evil.yaml"}},
		{name: "tarball with symlink outside", recipe: recipeYAML(urlSource("/symlink.tgz", "      path: pkg\n"), "", ""),
			want: []string{"pkg/evil.yaml"}},
		{name: "archive larger than the limit", recipe: recipeYAML(urlSource("/big.yaml", ""), "", ""), args: []string{"--max-download", "1000000"},
			want: []string{url("/big.yaml"), "limit"}},
		{name: "sha256 mismatch", recipe: recipeYAML(fmt.Sprintf("    upstream:\n      url: %s\n      sha256: %s\n", url("/ok.yaml"), strings.Repeat("ab", 32)), "", ""),
			want: []string{url("/ok.yaml"), strings.Repeat("ab", 32), sha(files["/ok.yaml"])}},
		{name: "patch matching nothing", recipe: recipeYAML(good, "      patches:\n        - {kind: Deployment, name: nope, merge: {spec: {replicas: 2}}}\n", ""),
			want: []string{"nope"}},
		{name: "chart mixed with manifests", recipe: strings.Replace(recipeYAML(good+"    chart:\n      dir: chart\n", "", ""), "from: [upstream]", "from: [chart, upstream]", 1),
			files: map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: x\nversion: 0.1.0\n"},
			want:  []string{"mixes chart source chart with upstream"}},
		{name: "image not pinned", recipe: recipeYAML("    upstream:\n      dir: manifests\n", "", pin),
			files: map[string]string{"manifests/d.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n        - {name: c, image: quay.io/foreman/foreman:nightly}\n"},
			want:  []string{"runs image quay.io/foreman/foreman:nightly, which package.images does not pin"}},
		{name: "registry unreachable", recipe: recipeYAML(good, "", ""), args: []string{"--registry", "oci://127.0.0.1:1/x"},
			want: []string{"127.0.0.1:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			dir := filepath.Join(work, "demo")
			os.MkdirAll(dir, 0o755)
			if err := os.WriteFile(filepath.Join(dir, "recipe.yaml"), []byte(tc.recipe), 0o644); err != nil {
				t.Fatal(err)
			}
			for n, body := range tc.files {
				p := filepath.Join(dir, n)
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(body), 0o644)
			}
			base := uniqueRepo(t, reg)
			args := []string{"build", "demo", "-o", "dist", "--plain-http", "--cache-dir", filepath.Join(work, "cache")}
			if !contains(tc.args, "--registry") {
				args = append(args, "--registry", base)
			}
			r := kbuild(t, work, nil, append(args, tc.args...)...)
			if r.code == 0 {
				t.Fatalf("kbuild build succeeded, want failure: %s", r)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stdout+r.stderr, w) {
					t.Errorf("output lacks %q: %s", w, r)
				}
			}
			if recs, _ := filepath.Glob(filepath.Join(work, "dist", "*.yaml")); len(recs) > 0 {
				t.Errorf("a failed build wrote %v", recs)
			}
			tags, _ := listTags(reg, strings.TrimPrefix(base, "oci://"+reg+"/")+"/demo/demo")
			if len(tags) > 0 {
				t.Errorf("a failed build pushed tags %v", tags)
			}
		})
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// listTags asks the registry for a repository's tags (none when it is unknown).
func listTags(reg, repo string) ([]string, error) {
	resp, err := http.Get("http://" + reg + "/v2/" + repo + "/tags/list")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	var l struct{ Tags []string }
	err = json.NewDecoder(resp.Body).Decode(&l)
	var tags []string
	for _, t := range l.Tags {
		if !strings.HasPrefix(t, "sha256-") { // referrers fallback tags
			tags = append(tags, t)
		}
	}
	sort.Strings(tags)
	return tags, err
}

// TestValidateExamples checks the output format of validate on good and bad
// recipes, with GitHub annotations.
func TestValidateOutput(t *testing.T) {
	work := t.TempDir()
	if err := copyDir(filepath.Join(repoRoot, "examples"), filepath.Join(work, "recipes")); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(work, "recipes", "zz-bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "recipe.yaml"), []byte(strings.Replace(recipeYAML("    upstream:\n      dir: .\n", "", ""), "build: 1", "build: 0", 1)), 0o644)
	r := kbuild(t, work, []string{"GITHUB_ACTIONS=true"}, "validate", "--offline", "--cache-dir", filepath.Join(work, "cache"), "recipes/")
	if r.code != 1 {
		t.Fatalf("validate: %s", r)
	}
	for _, want := range []string{
		"recipes/smart-proxy: ok\n",
		"recipes/virt-stack: ok\n",
		"recipes/virt-template: ok\n",
		"recipes/zz-bad: FAILED\n",
		"  error: line 9: spec.build: build must be 1 or more, got 0;",
		"::error file=recipes/zz-bad/recipe.yaml,line=9::spec.build: build must be 1 or more, got 0;",
		"1 of 4 recipes failed\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("validate output lacks %q:\n%s", want, r.stdout)
		}
	}
}

// pushedChart is a chart kbuild build pushed: its package, repository,
// manifest digest and archive digest.
type pushedChart struct{ pkg, repo, manifest, digest string }

// pullTemplateLint pulls c by manifest digest with helm, checks the
// archive's digest, renders it with helm template and lints it.
func pullTemplateLint(t *testing.T, helm string, c pushedChart) {
	t.Helper()
	pullDir := t.TempDir()
	cmd := exec.Command(helm, "pull", "oci://"+c.repo+"@"+c.manifest, "--plain-http", "-d", pullDir)
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helm pull %s@%s: %v\n%s", c.repo, c.manifest, err, out)
	}
	files, _ := filepath.Glob(filepath.Join(pullDir, "*.tgz"))
	if len(files) != 1 {
		t.Fatalf("helm pull wrote %v", files)
	}
	data, _ := os.ReadFile(files[0])
	sum := sha256.Sum256(data)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != c.digest {
		t.Errorf("pulled archive %s has digest %s, record says %s", files[0], got, c.digest)
	}
	tpl, err := exec.Command(helm, "template", "rel", files[0], "--include-crds").CombinedOutput()
	if err != nil {
		t.Fatalf("helm template %s: %v\n%s", files[0], err, tpl)
	}
	checkRendered(t, c.pkg, string(tpl))
	if out, err := exec.Command(helm, "lint", files[0]).CombinedOutput(); err != nil {
		t.Errorf("helm lint %s: %v\n%s", files[0], err, out)
	}
}
