package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/bundle"
	"kbuild.dev/kbuild/bundle/nodeconfig"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/trust"
)

// startMirror starts a second docker-registry on a free loopback port, with
// throwaway storage, as the air-gapped mirror; it stops with the test.
func startMirror(t *testing.T) string {
	t.Helper()
	bin := testenv.Tool(t, "docker-registry")
	dir := t.TempDir()
	port := freePort(t)
	cfg := filepath.Join(dir, "registry.yml")
	os.WriteFile(cfg, fmt.Appendf(nil, "version: 0.1\nlog: {level: error, accesslog: {disabled: true}}\nstorage:\n  filesystem: {rootdirectory: %s}\nhttp: {addr: 127.0.0.1:%d}\n", filepath.Join(dir, "data"), port), 0o644)
	cmd := exec.Command(bin, "serve", cfg)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitPort(t, port)
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// imageLine is an entry of a recipe's package.images.
var imageLine = regexp.MustCompile(`(?m)^      - ([a-z0-9.-]+\.[a-z]+/[a-z0-9/_.-]+):([A-Za-z0-9_.-]+)(@sha256:[0-9a-f]{64})?$`)

// pinGenerated copies the recipe directory from to to, each image of its
// package.images replaced by a small generated one pushed to
// src/<upstream name>:<tag> (a two-platform index for repositories ending
// in one of multi), pinned by digest everywhere the recipe names the old
// digest; it adds the new references to pinned.
func pinGenerated(t *testing.T, src, from, to string, pinned map[string]bool, multi ...string) {
	t.Helper()
	if out, err := exec.Command("cp", "-r", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	file := filepath.Join(to, "recipe.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, m := range imageLine.FindAllStringSubmatch(text, -1) {
		ref, _ := name.ParseReference(src+"/"+m[1]+":"+m[2], name.Insecure)
		var d v1.Hash
		if slices.ContainsFunc(multi, func(s string) bool { return strings.HasSuffix(m[1], s) }) {
			var adds []mutate.IndexAddendum
			for _, p := range []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}} {
				img, _ := random.Image(4096, 2)
				adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
			}
			ix := mutate.AppendManifests(empty.Index, adds...)
			if err := remote.WriteIndex(ref, ix); err != nil {
				t.Fatal(err)
			}
			d, _ = ix.Digest()
		} else {
			img, _ := random.Image(4096, 2)
			if err := remote.Write(ref, img); err != nil {
				t.Fatal(err)
			}
			d, _ = img.Digest()
		}
		pinned[m[1]+":"+m[2]+"@"+d.String()] = true
		if m[3] != "" {
			text = strings.ReplaceAll(text, m[3][1:], d.String())
		} else {
			text = strings.Replace(text, m[0], m[0]+"@"+d.String(), 1)
		}
	}
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// airgap is what the bundle end-to-end tests use: helm and skopeo, a
// mirror registry, a work directory with recipes/, a unique path src in
// the real registry, and the images pinned so far.
type airgap struct {
	helm, skopeo, mirror, work, src string
	pinned                          map[string]bool
}

func newAirgap(t *testing.T) *airgap {
	t.Helper()
	reg := testenv.Registry(t)
	e := &airgap{helm: testenv.Tool(t, "helm"), skopeo: testenv.Tool(t, "skopeo"), mirror: startMirror(t), work: t.TempDir(),
		src: strings.TrimPrefix(uniqueRepo(t, reg), "oci://"), pinned: map[string]bool{}}
	os.MkdirAll(filepath.Join(e.work, "recipes"), 0o755)
	return e
}

// signedSite builds the recipes under work/recipes into the real registry
// (charts under src/charts) and signs their index into work/site with
// work/keys/index.key; it also makes keys/other and keys/local.
func signedSite(t *testing.T, work, src string, build ...string) {
	t.Helper()
	steps := [][]string{
		append([]string{"build", "--registry", "oci://" + src + "/charts", "--plain-http", "-o", "dist"}, build...),
		{"repo", "keygen", "keys/index"},
		{"repo", "keygen", "keys/other"},
		{"repo", "keygen", "keys/local"},
		{"repo", "index", "dist", "-o", "site/index.yaml", "--sign-key", "keys/index.key"},
	}
	os.MkdirAll(filepath.Join(work, "keys"), 0o755)
	for _, s := range steps {
		if r := kbuild(t, work, nil, s...); r.code != 0 {
			t.Fatalf("kbuild %s: %s", strings.Join(s, " "), r)
		}
	}
}

// bundleInspect runs bundle inspect -o json (the old spelling of --format json).
func bundleInspect(t *testing.T, work, tar string) bundle.Inspection {
	t.Helper()
	r := kbuild(t, work, nil, "bundle", "inspect", tar, "-o", "json")
	var in bundle.Inspection
	if err := json.Unmarshal([]byte(r.stdout), &in); r.code != 0 || err != nil {
		t.Fatalf("bundle inspect: %v %s", err, r)
	}
	return in
}

// TestBundleExamples needs no ../shared: the bundled examples (virt-stack,
// a meta package, requiring virt-template and smart-proxy), their images
// generated under quay.io and registry.k8s.io names in the real registry,
// bundled, read by skopeo, imported into a second docker-registry and
// checked as importAndCheck does.
func TestBundleExamples(t *testing.T) {
	e := newAirgap(t)
	helm, skopeo, mirror, work, src, pinned := e.helm, e.skopeo, e.mirror, e.work, e.src, e.pinned
	for _, r := range []string{"virt-template", "smart-proxy", "virt-stack"} {
		from := filepath.Join(repoRoot, "examples", r)
		if r == "virt-stack" {
			// The meta package also pins an image of registry.k8s.io.
			tmp := filepath.Join(t.TempDir(), r)
			exec.Command("cp", "-r", from, tmp).Run()
			data, _ := os.ReadFile(filepath.Join(tmp, "recipe.yaml"))
			data = []byte(strings.Replace(string(data), "    variants:\n", "    images:\n      - registry.k8s.io/pause:3.10\n    variants:\n", 1))
			os.WriteFile(filepath.Join(tmp, "recipe.yaml"), data, 0o644)
			from = tmp
		}
		pinGenerated(t, src, from, filepath.Join(work, "recipes", r), pinned, "/pause")
	}
	if len(pinned) != 3 {
		t.Fatalf("pinned %v, want 3 images", pinned)
	}
	signedSite(t, work, src, "recipes/virt-template", "recipes/smart-proxy", "recipes/virt-stack")

	r := kbuild(t, work, nil, "bundle", "create", "virt-stack@1", "--index", "site", "--public-key", "keys/index.pub", "--image-source", "oci://"+src, "--plain-http", "-o", "stack.tar")
	if r.code != 0 || !strings.Contains(r.stdout, "smart-proxy 3.14.0 build 1 (required by virt-stack 1.0.0)") {
		t.Fatalf("bundle create: %s", r)
	}
	out, err := exec.Command(skopeo, "inspect", "--raw", "oci-archive:"+filepath.Join(work, "stack.tar")).CombinedOutput()
	if err != nil || strings.Count(string(out), `"dev.kbuild.bundle.kind":"image"`) != 3 || strings.Count(string(out), `"dev.kbuild.bundle.kind":"chart"`) != 2 {
		t.Errorf("skopeo inspect --raw: %v\n%s", err, out)
	}
	readWithOCITools(t, filepath.Join(work, "stack.tar"), e.src, pinned)
	in := bundleInspect(t, work, "stack.tar")
	importAndCheck(t, work, "stack.tar", mirror, helm, in, pinned, 3)
}

// readWithOCITools reads the bundle with two more OCI clients than skopeo:
// oras fetches every pinned image's manifest from the tar itself (an OCI
// layout in a tar), and crane pushes the unpacked layout, every blob of
// it, to the registry at host, from which every pinned manifest is read
// back by digest. Each manifest's bytes must hash to the pinned digest.
func readWithOCITools(t *testing.T, tarPath, host string, pinned map[string]bool) {
	t.Helper()
	oras, crane := testenv.Tool(t, "oras"), testenv.Tool(t, "crane")
	layoutDir := t.TempDir()
	if out, err := exec.Command("tar", "-xf", tarPath, "-C", layoutDir).CombinedOutput(); err != nil {
		t.Fatalf("tar -xf %s: %v\n%s", tarPath, err, out)
	}
	repo := host + "/oci-tools/bundle"
	if out, err := exec.Command(crane, "push", "--insecure", "--index", layoutDir, repo+":read").CombinedOutput(); err != nil {
		t.Fatalf("crane push --index of the unpacked bundle: %v\n%s", err, out)
	}
	for ref := range pinned {
		_, digest, ok := strings.Cut(ref, "@")
		if !ok {
			t.Fatalf("pinned image %s has no digest", ref)
		}
		for _, c := range []struct {
			tool string
			args []string
		}{
			{"oras", []string{oras, "manifest", "fetch", "--oci-layout", tarPath + "@" + digest}},
			{"crane", []string{crane, "manifest", "--insecure", repo + "@" + digest}},
		} {
			out, err := exec.Command(c.args[0], c.args[1:]...).Output()
			if err != nil {
				t.Errorf("%s: %v\n%s", strings.Join(c.args, " "), err, out)
				continue
			}
			if got := fmt.Sprintf("sha256:%x", sha256.Sum256(out)); got != digest {
				t.Errorf("%s read %s as a manifest of digest %s", c.tool, ref, got)
			}
		}
	}
}

// TestBundleRealRecipes builds kubevirt, cdi and virtualization from the
// seeded upstream fixtures (their images replaced by small generated ones
// under the same quay.io names in the real registry), signs an index, and
// then: bundle create twice (the same bytes), skopeo inspect oci-archive:,
// bundle inspect, a refused import that pushes nothing, an import into a
// second docker-registry, helm pull from the mirror by digest, kbuild repo
// verify on the imported site, and every image fetched from the mirror at
// the URL containerd derives from the written hosts.toml.
func TestBundleRealRecipes(t *testing.T) {
	fixtures := testenv.Upstream(t, "kubevirt-operator-v1.9.0.yaml", "cdi-operator-v1.66.1.yaml")
	e := newAirgap(t)
	helm, skopeo, mirror, work, src, pinned := e.helm, e.skopeo, e.mirror, e.work, e.src, e.pinned

	// The recipes, each image pinned to a generated image pushed under its
	// upstream name; virt-operator is a two-platform index.
	for _, r := range []string{"kubevirt", "cdi", "virtualization"} {
		pinGenerated(t, src, filepath.Join(repoRoot, "recipes", r), filepath.Join(work, "recipes", r), pinned, "/virt-operator")
	}
	if len(pinned) != 16 {
		t.Fatalf("pinned %d images, want the 9 of kubevirt and 7 of cdi", len(pinned))
	}

	cache := filepath.Join(work, "cache")
	if r := kbuild(t, work, nil, "cache", "add", "--cache-dir", cache, filepath.Join(fixtures, "kubevirt-operator-v1.9.0.yaml"), filepath.Join(fixtures, "cdi-operator-v1.66.1.yaml")); r.code != 0 {
		t.Fatalf("cache add: %s", r)
	}
	signedSite(t, work, src, "--offline", "--cache-dir", cache, "recipes/kubevirt", "recipes/cdi", "recipes/virtualization")
	// The public key beside the index, as publish writes it.
	os.MkdirAll(filepath.Join(work, "site", "keys"), 0o755)
	if b, err := os.ReadFile(filepath.Join(work, "keys", "index.pub")); err != nil || os.WriteFile(filepath.Join(work, "site", "keys", "index.pub"), b, 0o644) != nil {
		t.Fatal(err)
	}

	create := []string{"bundle", "create", "virtualization", "--index", "site", "--public-key", "keys/index.pub", "--image-source", "oci://" + src, "--plain-http"}
	r := kbuild(t, work, nil, append(create, "-o", "virt.tar")...)
	if r.code != 0 {
		t.Fatalf("bundle create: %s", r)
	}
	for _, want := range []string{"cdi 1.66.1 build 1 (required by kubevirt 1.9.0, virtualization 1.0.0)", "kubevirt 1.9.0 build 1 (required by cdi 1.66.1, virtualization 1.0.0)", "virtualization 1.0.0 build 1 (requested)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("bundle create does not list %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "copying quay.io/kubevirt/virt-api") {
		t.Errorf("bundle create prints no progress lines in CI:\n%s", r.stderr)
	}
	if r := kbuild(t, work, nil, append(create, "-o", "again.tar")...); r.code != 0 {
		t.Fatalf("bundle create again: %s", r)
	}
	a, _ := os.ReadFile(filepath.Join(work, "virt.tar"))
	b, _ := os.ReadFile(filepath.Join(work, "again.tar"))
	if sha256.Sum256(a) != sha256.Sum256(b) {
		t.Errorf("two bundles of the same index and packages differ")
	}

	// skopeo reads the bundle as an OCI archive.
	out, err := exec.Command(skopeo, "inspect", "oci-archive:"+filepath.Join(work, "virt.tar")).CombinedOutput()
	if err != nil {
		t.Fatalf("skopeo inspect: %v\n%s", err, out)
	}
	var si struct {
		Labels map[string]string
		Layers []string
	}
	if err := json.Unmarshal(out, &si); err != nil || !strings.Contains(si.Labels["org.opencontainers.image.description"], "virtualization 1.0.0 build 1") {
		t.Errorf("skopeo inspect: %v\n%s", err, out)
	}
	out, err = exec.Command(skopeo, "inspect", "--raw", "oci-archive:"+filepath.Join(work, "virt.tar")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), bundle.ArtifactType) || strings.Count(string(out), `"dev.kbuild.bundle.kind":"image"`) != 16 {
		t.Errorf("skopeo inspect --raw: %v\n%s", err, out)
	}

	in := bundleInspect(t, work, "virt.tar")
	if len(in.Images) != 16 || len(in.Charts) != 4 {
		t.Errorf("bundle inspect: %d images, %d charts; want 16 and 4", len(in.Images), len(in.Charts))
	}
	for _, im := range in.Images {
		if _, ok := pinned[im.Ref]; !ok || len(im.PinnedBy) != 1 {
			t.Errorf("bundle inspect: image %s pinned by %v", im.Ref, im.PinnedBy)
		}
	}

	r = kbuild(t, work, nil, "bundle", "inspect", "virt.tar")
	// Without SOURCE_DATE_EPOCH the bundle's time is the index's.
	if m := regexp.MustCompile(`^created: (\S+)\nindex: sha256:[0-9a-f]{64} \(generated (\S+),`).FindStringSubmatch(r.stdout); m == nil || m[1] != m[2] {
		t.Errorf("bundle inspect: created is not the index's generated time: %q", r.stdout)
	}
	pubPEM, err := os.ReadFile(filepath.Join(work, "keys", "index.pub"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := trust.ParsePublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	// Which key signed the index: the signature file names no keyid (one
	// key signs), so inspect finds it among the public keys the bundle
	// carries from the site.
	if want := "index signed by " + pub.KeyID() + " (keys/index.pub, carried in the bundle; import checks the signature against your keys)\n"; !strings.Contains(r.stdout, want) {
		t.Errorf("bundle inspect lacks %q: %s", want, r)
	}
	for _, want := range []string{"  kubevirt 1.9.0 build 1  sha256:", "pinned by cdi 1.66.1 build 1\n", "  quay.io/kubevirt/virt-operator:v1.9.0@sha256:"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("bundle inspect lacks %q: %s", want, r)
		}
	}

	// A bundle checked with another key is refused before anything is pushed.
	r = kbuild(t, work, nil, "bundle", "import", "virt.tar", "--mirror", "oci://"+mirror+"/airgap", "--site", "imported", "--node-config", "nodes", "--plain-http", "--public-key", "keys/other.pub")
	if r.code != exitVerification || !strings.Contains(r.stderr, "index is not signed by a trusted key") {
		t.Errorf("import with another key: %s", r)
	}
	mreg, _ := name.NewRegistry(mirror, name.Insecure)
	if repos, err := remote.Catalog(t.Context(), mreg); err != nil || len(repos) != 0 {
		t.Fatalf("the mirror holds %v (%v) after a refused import", repos, err)
	}

	importAndCheck(t, work, "virt.tar", mirror, helm, in, pinned, 3)

	// Without --sign-key the import says which index to subscribe to and
	// that its charts still point at the upstream registry.
	r = kbuild(t, work, nil, "bundle", "import", "virt.tar", "--mirror", "oci://"+mirror+"/airgap", "--site", "imported-plain", "--plain-http", "--public-key", "keys/index.pub")
	if r.code != 0 || !strings.Contains(r.stdout, "subscribe to imported-plain/index.yaml with the upstream keys: its charts still point at the upstream registry") {
		t.Errorf("import without --sign-key does not say what to subscribe to: %s", r)
	}

	// One platform of virt-operator's index: the index is kept byte for
	// byte, but docker-registry accepts an index only with every image it
	// names, and says so before the other images are pushed.
	if r := kbuild(t, work, nil, append(create, "--platform", "linux/amd64", "-o", "amd64.tar")...); r.code != 0 {
		t.Fatalf("bundle create --platform: %s", r)
	}
	r = kbuild(t, work, nil, "bundle", "import", "amd64.tar", "--public-key", "keys/index.pub", "--mirror", "oci://"+mirror+"/amd64", "--site", "amd64-site", "--plain-http")
	if r.code != exitFailed || !strings.Contains(r.stderr, "the bundle holds 1 of its 2 images and this registry requires every image") || !strings.Contains(r.stderr, "a partial image index; it was made with --platform: make the bundle without --platform for this mirror: ") {
		t.Errorf("import of a one-platform bundle into docker-registry: %s", r)
	}
	repos, _ := remote.Catalog(t.Context(), mreg)
	for _, repo := range repos {
		if strings.HasPrefix(repo, "amd64/") && !strings.HasSuffix(repo, "/virt-operator") {
			t.Errorf("the refused one-platform import pushed %s before the index", repo)
		}
	}
}

// importAndCheck imports tar into mirror (path airgap) with the node
// settings and a re-signed index, then checks: repo verify on the imported
// site (packages versions), repo verify --charts on the re-signed index,
// helm pull of every chart from the mirror by digest against the pin, and
// every pinned image at the URL containerd derives from hosts.toml. The
// keys are work/keys/index.* (upstream) and work/keys/local.* (made here).
func importAndCheck(t *testing.T, work, tar, mirror, helm string, in bundle.Inspection, pinned map[string]bool, packages int) {
	t.Helper()
	imp := []string{"bundle", "import", tar, "--mirror", "oci://" + mirror + "/airgap", "--site", "imported", "--node-config", "nodes", "--plain-http"}
	r := kbuild(t, work, nil, append(imp, "--public-key", "keys/index.pub", "--resign-key", "keys/local.key")...)
	if r.code != 0 {
		t.Fatalf("bundle import: %s", r)
	}
	for _, want := range []string{"index: imported/index.yaml", "charts and images: oci://" + mirror + "/airgap", "node settings: nodes"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("bundle import does not say %q:\n%s", want, r.stdout)
		}
	}
	if r := kbuild(t, work, nil, "repo", "verify", "--index", "imported/index.yaml", "--public-key", "keys/index.pub"); r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("%d packages", packages)) {
		t.Errorf("repo verify on the imported site: %s", r)
	}

	// The locally signed index points at the mirror: every chart it pins is there.
	if r := kbuild(t, work, nil, "repo", "verify", "--index", "imported/mirror/index.yaml", "--public-key", "keys/local.pub", "--charts", "--plain-http"); r.code != 0 || !strings.Contains(r.stderr, fmt.Sprintf("%d charts match their pinned digests", len(in.Charts))) {
		t.Errorf("repo verify --charts on the re-signed index: %s", r)
	}
	if r := kbuild(t, work, nil, "repo", "verify", "--index", "imported/mirror/index.yaml", "--public-key", "keys/index.pub"); r.code != exitVerification {
		t.Errorf("the re-signed index verifies with the upstream key: %s", r)
	}

	// helm pulls every chart from the mirror by digest; the archive is the pinned one.
	var loc bundle.Locations
	lb, _ := os.ReadFile(filepath.Join(work, "imported", bundle.LocationsFile))
	if err := json.Unmarshal(lb, &loc); err != nil || len(loc.Charts) != len(in.Charts) || len(loc.Images) != len(pinned) {
		t.Fatalf("%s: %v\n%s", bundle.LocationsFile, err, lb)
	}
	for i, c := range loc.Charts {
		repo := strings.TrimPrefix(c.Mirror[:strings.LastIndex(c.Mirror, ":")], "oci://")
		dir := t.TempDir()
		cmd := exec.Command(helm, "pull", "oci://"+repo+"@"+c.Digest, "--plain-http", "-d", dir)
		cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm pull %s: %v\n%s", repo, err, out)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.tgz"))
		data, _ := os.ReadFile(files[0])
		sum := sha256.Sum256(data)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != in.Charts[i].Digest {
			t.Errorf("helm pull %s: archive %s, the index pins %s", repo, got, in.Charts[i].Digest)
		}
	}

	// Nodes: each image is at the URL containerd derives from hosts.toml.
	for ref := range pinned {
		ir, _ := bundle.ParseImageRef(ref)
		var h struct {
			Server string
			Host   map[string]struct {
				Capabilities []string
				OverridePath bool `toml:"override_path"`
			}
		}
		if _, err := toml.DecodeFile(filepath.Join(work, "nodes", filepath.FromSlash(nodeconfig.ContainerdHosts(ir.Registry))), &h); err != nil {
			t.Fatal(err)
		}
		for host, c := range h.Host {
			u, _ := url.Parse(host)
			if !c.OverridePath {
				t.Errorf("hosts.toml for %s: no override_path", ir.Registry)
			}
			req, _ := http.NewRequest(http.MethodHead, u.String()+"/"+ir.Repository+"/manifests/"+ir.Digest, nil)
			req.Header.Set("Accept", "application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Docker-Content-Digest") != ir.Digest {
				t.Errorf("a node pulling %s asks %s: %s, digest %q", ref, req.URL, resp.Status, resp.Header.Get("Docker-Content-Digest"))
			}
		}
	}
	for _, f := range []string{nodeconfig.TalosPatch, nodeconfig.CRIODropIn} {
		if _, err := os.Stat(filepath.Join(work, "nodes", filepath.FromSlash(f))); err != nil {
			t.Errorf("node settings: %v", err)
		}
	}
}
