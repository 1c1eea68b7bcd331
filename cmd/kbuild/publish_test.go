package main

import (
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/sources"
)

// helmPull pulls ref with the real helm CLI and returns the archive bytes.
func helmPull(t *testing.T, helm, ref string) []byte {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(helm, "pull", ref, "--plain-http", "-d", dir)
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir(), "DOCKER_CONFIG="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helm pull %s: %v\n%s", ref, err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.tgz"))
	if len(files) != 1 {
		t.Fatalf("helm pull %s wrote %v", ref, files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPublishMainJob runs the README's first command on a fresh directory,
// serves the result with kbuild serve, and checks it the way a subscriber
// and helm do.
func TestPublishMainJob(t *testing.T) {
	helm := testenv.Tool(t, "helm")
	work := t.TempDir()
	r := kbuild(t, work, []string{"HOME=" + t.TempDir()}, "publish")
	if r.code != 0 {
		t.Fatalf("kbuild publish: %s", r)
	}
	for _, want := range []string{"wrote _site/index.yaml: 3 packages, 3 versions\n", "signed _site/index.yaml.sig (keyid "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("publish output lacks %q: %s", want, r)
		}
	}
	if !strings.Contains(r.stderr, "THROWAWAY key") {
		t.Errorf("publish does not say its key is a throwaway one: %s", r.stderr)
	}
	if fi, err := os.Stat(filepath.Join(work, "dist", "throwaway-index.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("throwaway key: %v, mode %v; want 0600", err, fi)
	}
	for _, f := range []string{"index.yaml", "index.yaml.sig", "keys/index.pub", "index.html", "packages/smart-proxy.html", "sbom.cdx.json",
		"sbom/smart-proxy-3.14.0-1.cdx.json", "provenance/smart-proxy-3.14.0-1.intoto.json", "build/virt-template-0.2.2-1.build.yaml"} {
		if _, err := os.Stat(filepath.Join(work, "_site", f)); err != nil {
			t.Errorf("site lacks %s", f)
		}
	}
	// The catalog's Repository snippet inlines the key that signed.
	pub, _ := os.ReadFile(filepath.Join(work, "_site", "keys", "index.pub"))
	page, _ := os.ReadFile(filepath.Join(work, "_site", "index.html"))
	page = []byte(html.UnescapeString(string(page)))
	if want := "  publicKeys:\n    - |\n      " + strings.ReplaceAll(strings.TrimSpace(string(pub)), "\n", "\n      "); len(pub) == 0 || !strings.Contains(string(page), want) {
		t.Errorf("index.html does not inline keys/index.pub in the Repository snippet (want %q)", want)
	}
	if byHash, _ := filepath.Glob(filepath.Join(work, "_site", "by-hash", "sha256", "*.sig")); len(byHash) != 1 {
		t.Errorf("by-hash holds %v, want the signature of the index by its digest", byHash)
	}

	addr, _, _ := startServe(t, work, "--site", "_site", "--layout", "dist/oci")
	r = kbuild(t, work, nil, "repo", "verify", "--index", "http://"+addr+"/index.yaml", "--public-key", "_site/keys/index.pub")
	if r.code != 0 || !strings.Contains(r.stdout, "index.yaml: 3 packages, 3 versions, signed by 1 of 1, expires in") {
		t.Fatalf("repo verify against kbuild serve: %s", r)
	}
	builds := readRecords(t, filepath.Join(work, "dist"))
	for _, b := range builds {
		for _, c := range b.Info.Charts {
			repo := strings.TrimPrefix(c.Ref[:strings.LastIndex(c.Ref, ":")], "oci://127.0.0.1:8080/")
			data := helmPull(t, helm, "oci://"+addr+"/"+repo+"@"+c.Manifest)
			if got := "sha256:" + sha(data); got != c.Digest {
				t.Errorf("helm pull through kbuild serve: archive %s, record says %s", got, c.Digest)
			}
			archive := filepath.Join(t.TempDir(), "chart.tgz")
			os.WriteFile(archive, data, 0o644)
			prov := filepath.Join("_site", "provenance", b.Record.Metadata.Name+"-"+b.Record.Spec.Version+"-1.intoto.json")
			r := kbuild(t, work, nil, "verify-provenance", "--archive", archive, "--provenance", prov, "--public-key", "_site/keys/index.pub")
			if r.code != 0 || !strings.Contains(r.stdout, "verified: "+b.Record.Metadata.Name) || !strings.Contains(r.stdout, "  source ") {
				t.Errorf("verify-provenance: %s", r)
			}
		}
	}

	// The second run is incremental and re-signs the same versions.
	r = kbuild(t, work, nil, "publish")
	if r.code != 0 || strings.Count(r.stdout, ": up to date (") != 3 || !strings.Contains(r.stdout, "examples/smart-proxy: up to date (smart-proxy 3.14.0 build 1 is published)") {
		t.Fatalf("second publish: %s", r)
	}
	// Another key is not trusted to extend this index.
	other := filepath.Join(t.TempDir(), "other")
	if r := kbuild(t, work, nil, "repo", "keygen", other); r.code != 0 {
		t.Fatalf("keygen: %s", r)
	}
	before, _ := os.ReadFile(filepath.Join(work, "_site", "index.yaml"))
	r = kbuild(t, work, nil, "publish", "--sign-key", other+".key")
	if r.code == 0 || !strings.Contains(r.stderr, "failed verification, so nothing was published") {
		t.Fatalf("publish with a stranger's key over the site: %s", r)
	}
	if after, _ := os.ReadFile(filepath.Join(work, "_site", "index.yaml")); string(after) != string(before) {
		t.Errorf("a refused publish changed index.yaml")
	}
}

// TestPublishRegistry publishes to the real registry: charts (pulled
// anonymously by digest with Helm 3 and Helm 4), mirrored image sources,
// provenance referrers; then a tampered base, a changed
// published version and a stranger's base are all refused before anything
// is pushed or written.
func TestPublishRegistry(t *testing.T) {
	reg := testenv.Registry(t)
	helms := testenv.Helms(t)
	work := t.TempDir()
	base := uniqueRepo(t, reg)
	if err := copyDir(filepath.Join(repoRoot, "examples"), filepath.Join(work, "recipes")); err != nil {
		t.Fatal(err)
	}
	// A recipe with an image source, as the foreman recipe has.
	img, _ := random.Image(256, 2)
	upstream, _ := name.NewTag(reg+"/upstream/tool:1.0", name.Insecure)
	if err := remote.Write(upstream, img); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	imgRef := upstream.String() + "@" + d.String()
	writeFiles(t, filepath.Join(work, "recipes", "tool"), map[string]string{
		"recipe.yaml": strings.NewReplacer("IMG", imgRef).Replace(`apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: tool
  annotations: {kubepkg.dev/description: "a tool"}
spec:
  version: 1.0.0
  build: 1
  sources:
    chart: {dir: chart}
    image: {image: {ref: "IMG"}}
  charts:
    tool: {from: [chart]}
  package:
    rollback: {safe: true}
    images: ["IMG"]
    variants:
      - name: default
        components: [{name: tool, path: tool}]
`),
		"chart/Chart.yaml":       "apiVersion: v2\nname: tool\nversion: 0.1.0\n",
		"chart/templates/p.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: tool}\nspec:\n  containers: [{name: tool, image: \"" + imgRef + "\"}]\n",
	})
	keys := filepath.Join(work, "keys", "index")
	if r := kbuild(t, work, nil, "repo", "keygen", keys); r.code != 0 {
		t.Fatalf("keygen: %s", r)
	}
	args := []string{"publish", "recipes", "--registry", base, "--plain-http", "--sign-key", keys + ".key", "--site", "site1", "--cache-dir", filepath.Join(work, "cache")}
	r := kbuild(t, work, nil, args...)
	if r.code != 0 {
		t.Fatalf("publish: %s", r)
	}
	mirror := strings.TrimPrefix(base, "oci://") + "/" + sources.MirrorPath(imgRef)
	if !strings.Contains(r.stdout, "mirrored "+imgRef+" to "+mirror+"@"+d.String()) {
		t.Errorf("publish did not mirror the image source to %s: %s", mirror, r.stdout)
	}
	md, _ := name.NewDigest(mirror+"@"+d.String(), name.Insecure)
	if _, err := remote.Head(md); err != nil {
		t.Errorf("mirrored image %s: %v", md, err)
	}

	data, _ := os.ReadFile(filepath.Join(work, "site1", "index.yaml"))
	idx, err := index.ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range readRecords(t, filepath.Join(work, "dist")) {
		for _, c := range b.Info.Charts {
			ref := strings.TrimPrefix(c.Ref, "oci://")
			repo := ref[:strings.LastIndex(ref, ":")]
			// Anyone can pull it, by digest, with no credentials: Helm 3
			// and Helm 4.
			for _, h := range helms {
				if got := "sha256:" + sha(helmPull(t, h.Path, "oci://"+repo+"@"+c.Manifest)); got != c.Digest {
					t.Errorf("anonymous pull of %s with %s: %s, want %s", repo, h.Name, got, c.Digest)
				}
			}
			// Its provenance and its SBOM are attached as referrers, and
			// for cosign and Flux its signature, SBOM and provenance as
			// Sigstore bundles.
			subject, _ := name.NewDigest(repo+"@"+c.Manifest, name.Insecure)
			refs, err := remote.Referrers(subject)
			if err != nil {
				t.Fatalf("referrers of %s: %v", subject, err)
			}
			m, _ := refs.IndexManifest()
			types := map[string]int{}
			for _, d := range m.Manifests {
				types[d.ArtifactType]++
			}
			if len(m.Manifests) != 5 || types["application/vnd.in-toto+json"] != 1 || types["application/vnd.cyclonedx+json"] != 1 || types["application/vnd.dev.sigstore.bundle.v0.3+json"] != 3 {
				t.Errorf("referrers of %s = %+v, want one in-toto envelope, one CycloneDX SBOM and three Sigstore bundles", subject, m.Manifests)
			}
		}
	}
	if len(idx.Packages) != 4 {
		t.Errorf("index has %d packages, want 4", len(idx.Packages))
	}

	// A base index with a flipped byte stops the next publish before it
	// pushes anything.
	tampered := strings.Replace(string(data), "a tool", "a tooL", 1)
	os.WriteFile(filepath.Join(work, "site1", "index.yaml"), []byte(tampered), 0o644)
	os.WriteFile(filepath.Join(work, "recipes", "tool", "recipe.yaml"), []byte(strings.Replace(readFile(t, filepath.Join(work, "recipes", "tool", "recipe.yaml")), "build: 1", "build: 2", 1)), 0o644)
	r = kbuild(t, work, nil, args...)
	if r.code == 0 || !strings.Contains(r.stderr, "failed verification") {
		t.Fatalf("publish over a tampered base: %s", r)
	}
	if tags, _ := listTags(reg, strings.TrimPrefix(base, "oci://"+reg+"/")+"/tool/tool"); len(tags) != 1 {
		t.Errorf("a publish over a tampered base pushed: tags %v", tags)
	}
	os.WriteFile(filepath.Join(work, "site1", "index.yaml"), data, 0o644)

	// A published version whose content changes is refused, whatever the
	// registry holds.
	os.WriteFile(filepath.Join(work, "recipes", "tool", "recipe.yaml"), []byte(strings.Replace(readFile(t, filepath.Join(work, "recipes", "tool", "recipe.yaml")), "build: 2", "build: 1", 1)), 0o644)
	writeFiles(t, filepath.Join(work, "recipes", "tool"), map[string]string{"chart/templates/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n"})
	r = kbuild(t, work, nil, append(args, "--rebuild")...)
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "published versions do not change, give the recipe a new build number") {
		t.Fatalf("publish of changed content under a published version: %s", r)
	}
	if now, _ := os.ReadFile(filepath.Join(work, "site1", "index.yaml")); string(now) != string(data) {
		t.Errorf("a refused publish changed index.yaml")
	}
	os.Remove(filepath.Join(work, "recipes", "tool", "chart", "templates", "extra.yaml"))

	// Merging over the index served over HTTP, verified with its key.
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(work, "site1"))))
	defer srv.Close()
	os.WriteFile(filepath.Join(work, "recipes", "tool", "recipe.yaml"), []byte(strings.Replace(readFile(t, filepath.Join(work, "recipes", "tool", "recipe.yaml")), "build: 1", "build: 2", 1)), 0o644)
	margs := []string{"publish", "recipes", "--registry", base, "--plain-http", "--sign-key", keys + ".key", "--site", "site2", "--cache-dir", filepath.Join(work, "cache"),
		"--index", srv.URL + "/index.yaml", "--public-key", keys + ".pub"}
	r = kbuild(t, work, nil, margs...)
	if r.code != 0 || !strings.Contains(r.stdout, "wrote site2/index.yaml: 4 packages, 5 versions") {
		t.Fatalf("publish --merge: %s", r)
	}
	if _, err := os.Stat(filepath.Join(work, "site2", "provenance", "smart-proxy-3.14.0-1.intoto.json")); err != nil {
		t.Errorf("the merged site lacks the provenance of a version published before: %v", err)
	}
	// The same merge verified with a stranger's key is refused.
	stranger := filepath.Join(t.TempDir(), "stranger")
	kbuild(t, work, nil, "repo", "keygen", stranger)
	r = kbuild(t, work, nil, append(margs[:len(margs)-1], stranger+".pub", "--site", "site3")...)
	if r.code == 0 || !strings.Contains(r.stderr, "failed verification") {
		t.Fatalf("publish --merge over a base signed by a stranger: %s", r)
	}
	if _, err := os.Stat(filepath.Join(work, "site3", "index.yaml")); err == nil {
		t.Errorf("a refused merge wrote site3/index.yaml")
	}
	// A missing base is an error without --allow-new.
	r = kbuild(t, work, nil, append(margs[:len(margs)-4], "--index", srv.URL+"/nothing/index.yaml", "--site", "site4")...)
	if r.code == 0 || !strings.Contains(r.stderr, "--allow-new") {
		t.Fatalf("publish --merge with no base: %s", r)
	}
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPublishRoot publishes under a root of trust: root.yaml and its chain
// are in the site, and a subscriber pinned to the root key accepts it.
func TestPublishRoot(t *testing.T) {
	work := t.TempDir()
	for _, args := range [][]string{
		{"repo", "keygen", "root"},
		{"repo", "keygen", "index"},
		{"trust", "root", "new", "--root-key", "root.pub", "--index-key", "index.pub", "-o", "trust/root.yaml"},
		{"trust", "root", "sign", "trust/root.yaml", "--sign-key", "root.key"},
		{"publish", "--sign-key", "index.key", "--root", "trust/root.yaml"},
	} {
		if r := kbuild(t, work, nil, args...); r.code != 0 {
			t.Fatalf("kbuild %v: %s", args, r)
		}
	}
	for _, f := range []string{"root.yaml", "root/1.yaml"} {
		if _, err := os.Stat(filepath.Join(work, "_site", f)); err != nil {
			t.Errorf("site lacks %s", f)
		}
	}
	r := kbuild(t, work, nil, "repo", "verify", "--index", "_site/index.yaml", "--root-key", "root.pub")
	if r.code != 0 || !strings.Contains(r.stdout, "root.yaml: version 1") {
		t.Fatalf("repo verify --root-key: %s", r)
	}
	// The catalog pins the root keys, not the index key.
	rootPub, _ := os.ReadFile(filepath.Join(work, "root.pub"))
	page, _ := os.ReadFile(filepath.Join(work, "_site", "index.html"))
	page = []byte(html.UnescapeString(string(page)))
	if want := "  trust:\n    rootThreshold: 1\n    rootKeys:\n      - |\n        " + strings.ReplaceAll(strings.TrimSpace(string(rootPub)), "\n", "\n        "); !strings.Contains(string(page), want) || strings.Contains(string(page), "publicKeys:") {
		t.Errorf("index.html does not pin the root key (want %q)", want)
	}
	// An index key the root does not list is refused before anything is
	// built, and so would a subscriber refuse what it signs.
	kbuild(t, work, nil, "repo", "keygen", "other")
	if r := kbuild(t, work, nil, "publish", "--sign-key", "other.key", "--root", "trust/root.yaml", "--site", "other"); r.code != 1 || !strings.Contains(r.stderr, "include 0 of the index role's keys") {
		t.Fatalf("publish with a key outside the root: %s", r)
	}
	if _, err := os.Stat(filepath.Join(work, "other")); err == nil {
		t.Errorf("a refused publish wrote a site")
	}
}
