package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/internal/testenv"
)

// TestRealRecipes seeds the cache from the real upstream release files in
// ../shared/fixtures (verified against the recipes' pins), then validates
// recipes/ offline and builds kubevirt, cdi and virtualization offline into
// the real registry, and checks the charts with helm.
func TestRealRecipes(t *testing.T) {
	shared := testenv.Shared(t)
	reg := testenv.Registry(t)
	helm := testenv.Tool(t, "helm")
	work := t.TempDir()
	cache := filepath.Join(work, "cache")
	fixtures := filepath.Join(shared, "fixtures", "upstream")
	r := kbuild(t, repoRoot, nil, "cache", "add", "--cache-dir", cache,
		filepath.Join(fixtures, "kubevirt-operator-v1.9.0.yaml"), filepath.Join(fixtures, "cdi-operator-v1.66.1.yaml"))
	if r.code != 0 {
		t.Fatalf("cache add: %s", r)
	}
	sums, _ := os.ReadFile(filepath.Join(fixtures, "SHA256SUMS"))
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		f := strings.Fields(line)
		if strings.Contains(f[1], "operator") && !strings.Contains(r.stdout, "sha256:"+f[0]) {
			t.Errorf("cache add did not store %s under its published sha256 %s: %s", f[1], f[0], r.stdout)
		}
	}

	r = kbuild(t, repoRoot, nil, "validate", "--offline", "--cache-dir", cache, "recipes/")
	if r.code != 0 || !strings.Contains(r.stdout, "0 of 8 recipes failed") {
		t.Fatalf("validate --offline recipes/: %s", r)
	}
	// The foreman-stack release set pins builds the recipes make.
	if !strings.Contains(r.stdout, "recipes/foreman-stack: ok\n") || !strings.Contains(r.stdout, "recipes/smart-proxy: ok\n") {
		t.Errorf("validate --offline recipes/ does not accept the Foreman stack: %s", r.stdout)
	}
	if !strings.Contains(r.stdout, "recipes/foreman: ok\n  warning: not checked against the rendered charts") {
		t.Errorf("validate does not say what it could not check for foreman: %s", r.stdout)
	}
	if !strings.Contains(r.stdout, `warning: line 35: spec.package.images[0]: image "quay.io/kubevirt/cdi-apiserver:v1.66.1" is not pinned by digest`) {
		t.Errorf("validate --offline does not warn about cdi's unpinned images: %s", r.stdout)
	}
	// The same unpinned images are errors when online.
	r = kbuild(t, repoRoot, nil, "validate", "--cache-dir", cache, "recipes/cdi")
	if r.code != 1 || !strings.Contains(r.stdout, "error: line 35: spec.package.images[0]") {
		t.Errorf("validate recipes/cdi without --offline: %s", r)
	}

	base := uniqueRepo(t, reg)
	out := filepath.Join(work, "dist")
	r = kbuild(t, repoRoot, nil, "build", "--offline", "--cache-dir", cache, "--registry", base, "--plain-http", "-o", out,
		"recipes/kubevirt", "recipes/cdi", "recipes/virtualization")
	if r.code != 0 {
		t.Fatalf("build --offline: %s", r)
	}
	builds := readRecords(t, out)
	if len(builds) != 3 {
		t.Fatalf("%d records, want 3", len(builds))
	}
	for _, b := range builds {
		if b.Record.Metadata.Name != "kubevirt" {
			continue
		}
		spec := b.Record.Spec
		if spec.Rollback == nil || spec.Rollback.Safe || len(spec.Images) != 9 || spec.CRDs[0] != "kubevirts.kubevirt.io" {
			t.Errorf("kubevirt spec: %+v", spec)
		}
		comps := spec.Variants[0].Components
		if len(comps) != 2 || comps[1].Install.DependsOn[0] != "operator" || comps[1].Install.ReadyWhen[0].Condition != "Available" {
			t.Errorf("kubevirt components: %+v", comps)
		}
		for _, c := range b.Info.Charts {
			ref := strings.TrimPrefix(c.Ref, "oci://")
			repo := ref[:strings.LastIndex(ref, ":")]
			pull := t.TempDir()
			cmd := exec.Command(helm, "pull", "oci://"+repo+"@"+c.Manifest, "--plain-http", "-d", pull)
			cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir())
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("helm pull: %v\n%s", err, out)
			}
			files, _ := filepath.Glob(filepath.Join(pull, "*.tgz"))
			tpl, err := exec.Command(helm, "template", "kubevirt", files[0], "--namespace", "kubevirt", "--include-crds").CombinedOutput()
			if err != nil {
				t.Fatalf("helm template: %v\n%s", err, tpl)
			}
			out := string(tpl)
			switch c.Name {
			case "kubevirt-operator":
				var deployment string
				for _, doc := range strings.Split(out, "\n---\n") {
					if strings.Contains(doc, "\nkind: Namespace\n") {
						t.Errorf("kubevirt-operator still has the Namespace:\n%s", doc)
					}
					if strings.Contains(doc, "\nkind: Deployment\n") && strings.Contains(doc, "\n  name: virt-operator\n") {
						deployment = doc
					}
				}
				if strings.Contains(deployment, "requiredDuringSchedulingIgnoredDuringExecution") || !strings.Contains(deployment, "preferredDuringSchedulingIgnoredDuringExecution") {
					t.Errorf("virt-operator keeps the required control-plane affinity or lost the preferred one:\n%s", deployment)
				}
				for _, want := range []string{"kind: CustomResourceDefinition", "name: kubevirts.kubevirt.io", "image: quay.io/kubevirt/virt-operator:v1.9.0"} {
					if !strings.Contains(out, want) {
						t.Errorf("kubevirt-operator renders without %q", want)
					}
				}
			case "kubevirt":
				if !strings.Contains(out, "kind: KubeVirt") {
					t.Errorf("kubevirt chart does not create the KubeVirt CR:\n%s", out)
				}
			}
		}
	}
}

// TestForemanShape builds a recipe of the foreman recipe's shape (a git
// source at a commit with a path, values pinning three images by digest,
// and image sources) against a chart repository served by git daemon on
// loopback and images in the real registry.
func TestForemanShape(t *testing.T) {
	reg := testenv.Registry(t)
	git := testenv.Tool(t, "git")
	work := t.TempDir()

	// Three images standing in for Foreman, Pulp and Candlepin.
	digests := map[string]string{}
	for _, n := range []string{"foreman", "pulp", "candlepin"} {
		img, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := name.NewTag(reg+"/upstream/"+n+":nightly", name.Insecure)
		if err := remote.Write(ref, img); err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		digests[n] = d.String()
	}

	// A git repository with charts/foreman-stack, served by git daemon.
	repo := filepath.Join(work, "srv", "foreman-kubernetes.git")
	chart := filepath.Join(work, "checkout", "charts", "foreman-stack")
	os.MkdirAll(filepath.Join(chart, "templates"), 0o755)
	os.WriteFile(filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: foreman-stack\nversion: 0.1.0\ndescription: Foreman, Pulp and Candlepin\n"), 0o644)
	values := "# images of the stack\n"
	tmpl := ""
	for _, n := range []string{"foreman", "pulp", "candlepin"} {
		values += fmt.Sprintf("%s:\n  image:\n    repository: %s/upstream/%s\n    tag: nightly\n", n, reg, n)
		tmpl += fmt.Sprintf("---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s}\nspec:\n  template:\n    spec:\n      containers:\n        - name: %s\n          image: \"{{ .Values.%s.image.repository }}:{{ .Values.%s.image.tag }}\"\n", n, n, n, n)
	}
	os.WriteFile(filepath.Join(chart, "values.yaml"), []byte(values), 0o644)
	os.WriteFile(filepath.Join(chart, "templates", "deployments.yaml"), []byte(tmpl), 0o644)
	checkout := filepath.Join(work, "checkout")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", checkout},
		{"-C", checkout, "add", "-A"},
		{"-C", checkout, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "chart"},
		{"clone", "-q", "--bare", checkout, repo},
	} {
		if out, err := exec.Command(git, args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	commit, _ := exec.Command(git, "-C", checkout, "rev-parse", "HEAD").Output()
	port := freePort(t)
	daemon := exec.Command(git, "daemon", "--reuseaddr", "--export-all", "--base-path="+filepath.Join(work, "srv"), "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), filepath.Join(work, "srv"))
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { daemon.Process.Kill(); daemon.Wait() }()
	waitPort(t, port)

	// The foreman recipe with its upstream locations replaced by the local ones.
	data, err := os.ReadFile(filepath.Join(repoRoot, "recipes", "foreman", "recipe.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rec := string(data)
	rec = strings.Replace(rec, "https://github.com/jakduch/foreman-kubernetes", fmt.Sprintf("git://127.0.0.1:%d/foreman-kubernetes.git", port), 1)
	rec = strings.Replace(rec, "819e79e9cc0c8bb7db46a2343137b79911dd0ecb", strings.TrimSpace(string(commit)), 1)
	for n, tag := range map[string]string{"foreman": "nightly", "pulp": "foreman-nightly", "candlepin": "foreman-nightly"} {
		old := fmt.Sprintf("quay.io/foreman/%s:%s@sha256:", n, tag)
		i := strings.Index(rec, old)
		if i < 0 {
			t.Fatalf("recipes/foreman has no %s", old)
		}
		upstreamDigest := rec[i+len(old)-len("sha256:") : i+len(old)+64]
		rec = strings.ReplaceAll(rec, upstreamDigest, digests[n])
		rec = strings.ReplaceAll(rec, fmt.Sprintf("quay.io/foreman/%s:%s@", n, tag), fmt.Sprintf("%s/upstream/%s:nightly@", reg, n))
		rec = strings.ReplaceAll(rec, "repository: quay.io/foreman/"+n, "repository: "+reg+"/upstream/"+n)
		rec = strings.ReplaceAll(rec, fmt.Sprintf("tag: \"%s@", tag), "tag: \"nightly@")
	}
	dir := filepath.Join(work, "recipes", "foreman")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "recipe.yaml"), []byte(rec), 0o644)

	cache := filepath.Join(work, "cache")
	out := filepath.Join(work, "dist")
	base := uniqueRepo(t, reg)
	r := kbuild(t, work, nil, "build", "recipes/foreman", "--registry", base, "--plain-http", "-o", out, "--cache-dir", cache)
	if r.code != 0 {
		t.Fatalf("build: %s\nrecipe:\n%s", r, rec)
	}
	b := readRecords(t, out)[0]
	kinds := map[string]int{}
	for _, s := range b.Info.Sources {
		kinds[s.Kind]++
		if s.Kind == "git" && !strings.Contains(s.Origin, strings.TrimSpace(string(commit))) {
			t.Errorf("git source origin %q lacks the commit", s.Origin)
		}
	}
	if kinds["git"] != 1 || kinds["image"] != 3 {
		t.Errorf("resolved sources = %+v", b.Info.Sources)
	}
	// kbuild fetch fills another cache without building; a build offline
	// from it needs nothing else.
	cache2 := filepath.Join(work, "cache2")
	r = kbuild(t, work, nil, "fetch", "recipes/foreman", "--plain-http", "--cache-dir", cache2)
	if r.code != 0 || strings.Count(r.stdout, "recipes/foreman ") != 4 || !strings.Contains(r.stdout, " git://127.0.0.1:") {
		t.Fatalf("fetch: %s", r)
	}
	if r := kbuild(t, work, nil, "build", "--offline", "recipes/foreman", "-o", filepath.Join(work, "dist-fetched"), "--cache-dir", cache2); r.code != 0 {
		t.Fatalf("build --offline from the fetched cache: %s", r)
	}
	// Offline, from the cache alone, the build gives the same chart.
	r2 := kbuild(t, work, nil, "build", "--offline", "recipes/foreman", "--registry", base, "--plain-http", "-o", filepath.Join(work, "dist2"), "--cache-dir", cache)
	if r2.code != 0 || !strings.Contains(r2.stderr, "already published with the same content") {
		t.Fatalf("offline rebuild: %s", r2)
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitPort(t *testing.T, port int) {
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("nothing listens on port %d", port)
}
