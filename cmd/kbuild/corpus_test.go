package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/internal/testtree"
)

// corpus is testdata/corpus: recipes shaped like what upstream ships (helm
// test pods with random names, tagless and digest-only images, an operator
// with a CR naming an image and an image only it deploys, a CRD with
// anchors patched on the anchor and through the alias, a List with shared
// anchors, a CRLF file, a chart branching on .Capabilities).
var corpus = filepath.Join(repoRoot, "testdata", "corpus")

func corpusImage(ref, mark string) string { return "      - " + ref + "  # " + mark + "\n" }

// TestCorpus checks what validate and images print for each corpus recipe;
// builder's TestCorpusBuild builds them.
func TestCorpus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		images []string // kbuild images --offline, after "    images:"
	}{
		{name: "demo-tests", images: []string{
			corpusImage("docker.io/giantswarm/tiny-tools:latest@sha256:b240ae14a0d718442ea960eb4441c2fb12e158312569ddd2bd0ae120b4878a46", "rendered by chart demo-tests"),
			corpusImage("docker.io/library/busybox@sha256:2919d0172f7524b2d8df9e50066a682669e6d170ac0f6a49676d54358fe970b5", "rendered by chart demo-tests"),
			corpusImage("docker.io/library/nginx:1.27@sha256:5be1ecc7935f1dd85635d4feedaf660594030253cc97c9e9ca3819ffeac36b65", "rendered by chart demo-tests"),
		}},
		{name: "capabilities"},
		{name: "operator", images: []string{
			corpusImage("quay.io/example/backup-agent:v0.9.1@sha256:e468ce626d0b68dc294196e9c1a0db99bdeead1705d44c249e60b9587acf9790", "rendered by chart backup-operator"),
			corpusImage("quay.io/example/backup-operator:v0.9.1@sha256:8b6a61f6a50e07f5ac3db1bdbeb4508cf31dc5960d00ad17e4c7684e68824f34", "rendered by chart backup-operator"),
			corpusImage("quay.io/example/backup-restorer:v0.9.1@sha256:f02a13d6fde9d252b8b331afbd68e0673cc5630373d79265c71965df360ccc3b", "no chart renders it (deployed by an operator?)"),
			corpusImage("quay.io/example/backup-uploader:v0.9.1@sha256:2718d3e51d5036cfa5ffd67e7d9953d18ce53a992c5fc2c6fb5045fee011be0e", "rendered by chart backup-operator"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(corpus, tc.name)
			cache := t.TempDir()
			t.Run("validate", func(t *testing.T) {
				r := kbuild(t, repoRoot, nil, "validate", "--offline", "--cache-dir", cache, dir)
				if r.code != 0 || !strings.Contains(r.stdout, dir+": ok") || strings.Contains(r.stdout, "error:") {
					t.Errorf("validate: %s", r)
				}
			})
			t.Run("images", func(t *testing.T) {
				r := kbuild(t, repoRoot, nil, "images", "--offline", "--cache-dir", cache, dir)
				want := "    images:\n" + strings.Join(tc.images, "")
				if r.code != 0 || r.stdout != want {
					t.Errorf("images printed\n%s\nwant\n%s\n%s", r.stdout, want, r)
				}
				if len(tc.images) > 0 {
					return
				}
				// No images: list to rewrite: the block is printed to paste.
				cp := filepath.Join(t.TempDir(), tc.name)
				if err := copyDir(dir, cp); err != nil {
					t.Fatal(err)
				}
				r = kbuild(t, repoRoot, nil, "images", "--write", "--offline", "--cache-dir", cache, cp)
				if r.code == 0 || r.stdout != want || !strings.Contains(r.stderr, "paste the printed block instead") {
					t.Errorf("images --write without an images: list: %s", r)
				}
			})
		})
	}
}

// serveChartRepo serves a Helm chart repository on loopback: index.yaml
// lists each archive (by chart name) as NAME-VERSION.tgz with the digest
// listed returns for it (the archive's own when listed is nil).
func serveChartRepo(t *testing.T, archives map[string]*builder.Archive, listed func(*builder.Archive) string) *httptest.Server {
	t.Helper()
	if listed == nil {
		listed = func(a *builder.Archive) string { return a.Digest }
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/index.yaml" {
			fmt.Fprintf(w, "apiVersion: v1\nentries:\n")
			for n, a := range archives {
				fmt.Fprintf(w, "  %s:\n    - {name: %s, version: %s, urls: [%s-%s.tgz], digest: %s}\n", n, n, a.Version, n, a.Version, strings.TrimPrefix(listed(a), "sha256:"))
			}
			return
		}
		for n, a := range archives {
			if r.URL.Path == "/"+n+"-"+a.Version+".tgz" {
				w.Write(a.Data)
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestCorpusDiff commits the corpus to a git repository: a diff of an
// unchanged recipe is empty (random names render the same every time), a
// template renamed (which changes the generated name of its test pod) is one
// changed pod, an edit of the pods a range loop names at random changes
// those pods (each with a name of its own) and adds or removes none, and a
// changed patch on the anchored CRD changes only the
// version it names.
func TestCorpusDiff(t *testing.T) {
	testenv.Tool(t, "git")
	repo := t.TempDir()
	if err := copyDir(corpus, filepath.Join(repo, "recipes")); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "corpus")
	cache := t.TempDir()
	for _, r := range []string{"demo-tests", "capabilities", "operator"} {
		res := kbuild(t, repo, nil, "diff", "--cache-dir", cache, "recipes/"+r)
		if res.code != 0 || !strings.Contains(res.stdout, "no changes") || strings.Contains(res.stdout, "added") || strings.Contains(res.stdout, "removed") {
			t.Errorf("diff of unchanged %s: %s", r, res)
		}
	}

	tests := filepath.Join(repo, "recipes", "demo-tests", "chart", "templates", "tests")
	if err := os.Rename(filepath.Join(tests, "test-1.yaml"), filepath.Join(tests, "test-connection.yaml")); err != nil {
		t.Fatal(err)
	}
	edit(t, filepath.Join(tests, "test-connection.yaml"), `command: ["wget"`, `command: ["curl"`)
	res := kbuild(t, repo, nil, "diff", "--cache-dir", cache, "recipes/demo-tests")
	if res.code != 0 || !strings.Contains(res.stdout, "objects: 0 added, 1 changed, 0 removed") ||
		!strings.Contains(res.stdout, "changed Pod demo-tests-test-1-") || !strings.Contains(res.stdout, "(was demo-tests-test-1-") ||
		!strings.Contains(res.stdout, "-        - wget\n+        - curl\n") {
		t.Errorf("diff of a renamed test pod: %s", res)
	}

	edit(t, filepath.Join(tests, "test-endpoints.yaml"), `command: ["curl", "-fsS"`, `command: ["curl", "-fsSL"`)
	res = kbuild(t, repo, nil, "diff", "--cache-dir", cache, "recipes/demo-tests")
	if res.code != 0 || !strings.Contains(res.stdout, "objects: 0 added, 4 changed, 0 removed") || strings.Count(res.stdout, "changed Pod demo-tests-fetch-") != 3 ||
		strings.Count(res.stdout, "+        - -fsSL\n") != 3 {
		t.Errorf("diff of the pods a loop makes: %s", res)
	}

	edit(t, filepath.Join(repo, "recipes", "operator", "recipe.yaml"), "              value: 0\n", "              value: 2\n")
	res = kbuild(t, repo, nil, "diff", "--cache-dir", cache, "recipes/operator")
	if res.code != 0 || !strings.Contains(res.stdout, "objects: 0 added, 1 changed, 0 removed") || strings.Count(res.stdout, "\n-") != 2 ||
		!strings.Contains(res.stdout, "-                  minimum: 0\n+                  minimum: 2\n") {
		t.Errorf("diff of the CRD patch: %s", res)
	}
}

// TestCorpusInit drafts recipes for the corpus charts, served from a chart
// repository on loopback, with every image registry unreachable: the draft
// is written and validates but for the images left to pin.
func TestCorpusInit(t *testing.T) {
	archives := map[string]*builder.Archive{}
	for _, n := range []string{"demo-tests", "capabilities"} {
		a, err := builder.Pack(filepath.Join(corpus, n, "chart"), n, map[string]string{"demo-tests": "2.1.0", "capabilities": "0.3.0"}[n], time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		archives[n] = a
	}
	srv := serveChartRepo(t, archives, nil)
	proxy := httptest.NewServer(&recordingProxy{})
	defer proxy.Close()
	env := []string{"HTTPS_PROXY=" + proxy.URL, "HTTP_PROXY=" + proxy.URL, "NO_PROXY=", "DOCKER_CONFIG=" + t.TempDir()}
	for _, tc := range []struct {
		chart, version string
		draft          []string // in the draft
		todo           int      // images to pin
	}{
		{chart: "demo-tests", version: "2.1.0", draft: []string{
			"      - docker.io/giantswarm/tiny-tools:latest  # TODO: pin",
			"      - docker.io/library/busybox@sha256:2919d0172f7524b2d8df9e50066a682669e6d170ac0f6a49676d54358fe970b5\n",
			"      - docker.io/library/nginx:1.27  # TODO: pin",
		}, todo: 2},
		{chart: "capabilities", version: "0.3.0", draft: []string{`version: "0.3.0"`}},
	} {
		t.Run(tc.chart, func(t *testing.T) {
			work := t.TempDir()
			cache := filepath.Join(work, "cache")
			r := kbuild(t, work, env, "init", "rec", "--cache-dir", cache, "--chart", srv.URL+"/"+tc.chart+"@"+tc.version)
			if r.code != 0 {
				t.Fatalf("init: %s", r)
			}
			if got := strings.Contains(r.stderr, fmt.Sprintf("warning: %d images are not pinned", tc.todo)); got != (tc.todo > 0) {
				t.Errorf("init warning: %s", r)
			}
			data, _ := os.ReadFile(filepath.Join(work, "rec", "recipe.yaml"))
			for _, w := range tc.draft {
				if !strings.Contains(string(data), w) {
					t.Errorf("draft lacks %q:\n%s", w, data)
				}
			}
			r = kbuild(t, work, env, "validate", "--cache-dir", cache, "rec")
			if n := strings.Count(r.stdout, "error:"); n != tc.todo || (tc.todo == 0 && r.code != 0) {
				t.Errorf("validate the draft: %d errors, want %d: %s", n, tc.todo, r)
			}
		})
	}
}

// TestKubevirtImages runs kbuild images on the KubeVirt recipe, whose
// operator deploys most of the nine images it pins: all nine are kept, the
// one the chart renders is marked so, the others as rendered by no chart.
func TestKubevirtImages(t *testing.T) {
	upstream := testenv.Upstream(t, "kubevirt-operator-v1.9.0.yaml")
	cache := t.TempDir()
	r := kbuild(t, repoRoot, nil, "cache", "add", "--cache-dir", cache, filepath.Join(upstream, "kubevirt-operator-v1.9.0.yaml"))
	if r.code != 0 {
		t.Fatalf("cache add: %s", r)
	}
	r = kbuild(t, repoRoot, nil, "images", "--offline", "--cache-dir", cache, "recipes/kubevirt")
	if r.code != 0 {
		t.Fatalf("images: %s", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")[1:]
	if len(lines) != 9 {
		t.Fatalf("images printed %d images, want the 9 the recipe pins:\n%s", len(lines), r.stdout)
	}
	if !strings.Contains(r.stdout, "virt-operator:v1.9.0@sha256:d08b5b5ad1c0d694fad13279e44b44b6fad961aa7508acd53b87ce6ef468cbae  # rendered by chart kubevirt-operator\n") {
		t.Errorf("virt-operator not marked as rendered:\n%s", r.stdout)
	}
	if n := strings.Count(r.stdout, "# no chart renders it"); n != 8 {
		t.Errorf("no image marked as deployed by the operator:\n%s", r.stdout)
	}
}

// TestHelmAgrees builds recipes with the real helm reading the result:
// the corpus operator (anchors, a List with shared anchors, CRLF) builds and
// helm template renders the built chart, with the patch on the anchor
// changing one CRD version only; a chart whose template aliases an anchor of
// an earlier document is refused by kbuild, as helm template refuses it;
// with Helm 3 and Helm 4.
func TestHelmAgrees(t *testing.T) {
	helms := testenv.Helms(t)
	work := t.TempDir()
	out := filepath.Join(work, "dist")
	r := kbuild(t, repoRoot, nil, "build", "--offline", "--cache-dir", filepath.Join(work, "cache"), "-o", out, filepath.Join(corpus, "operator"))
	if r.code != 0 {
		t.Fatalf("build: %s", r)
	}
	info := testtree.Read(t, out)["backup-operator-0.9.1-1.build.yaml"]
	m := regexp.MustCompile(`digest: sha256:([0-9a-f]{64})`).FindStringSubmatch(info[strings.Index(info, "charts:"):])
	if m == nil {
		t.Fatalf("no chart digest in the BuildInfo:\n%s", info)
	}
	tgz := filepath.Join(out, "oci", "blobs", "sha256", m[1])
	bad := filepath.Join(work, "bad")
	writeFiles(t, bad, map[string]string{
		"recipe.yaml":            recipeYAML("    upstream:\n      dir: chart\n", "", ""),
		"chart/Chart.yaml":       "apiVersion: v2\nname: demo\nversion: 1.0.0\n",
		"chart/templates/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: &l {app: x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  labels: *l\n",
	})
	for _, h := range helms {
		t.Run(h.Name, func(t *testing.T) { helmAgrees(t, h.Path, tgz, bad) })
	}
	r = kbuild(t, work, nil, "validate", "--cache-dir", filepath.Join(work, "cache"), "bad")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "unknown anchor") {
		t.Errorf("kbuild validate accepts what helm refuses: %s", r)
	}
}

// helmAgrees renders the built chart tgz with the helm CLI helm and
// checks that it refuses the chart in bad, as kbuild does.
func helmAgrees(t *testing.T, helm, tgz, bad string) {
	cmd := exec.Command(helm, "template", "backup", tgz)
	rendered, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm template of the built chart: %v\n%s", err, rendered)
	}
	for _, want := range []string{"kind: ServiceAccount", "kind: ConfigMap", "name: backup-metrics", "kind: Backup", "minimum: 0", "minimum: 1", "pattern: ^@(daily|weekly)$"} {
		if !strings.Contains(string(rendered), want) {
			t.Errorf("helm template lacks %q:\n%s", want, rendered)
		}
	}
	if strings.Count(string(rendered), "pattern:") != 1 || strings.Contains(string(rendered), "kind: Namespace") {
		t.Errorf("the patch through the alias reached the other version, or the Namespace is left:\n%s", rendered)
	}

	hout, err := exec.Command(helm, "template", "x", filepath.Join(bad, "chart")).CombinedOutput()
	if err == nil || !strings.Contains(string(hout), "unknown anchor") {
		t.Fatalf("helm template of the cross-document alias = %v:\n%s; the test expects helm to refuse it", err, hout)
	}
}

// TestKubeVersionFlag builds the corpus chart that branches on
// .Capabilities with --kube-version: the sidecar records the version and
// its API set, and a version outside the chart's kubeVersion is refused.
func TestKubeVersionFlag(t *testing.T) {
	dir := filepath.Join(corpus, "capabilities")
	out := filepath.Join(t.TempDir(), "dist")
	r := kbuild(t, repoRoot, nil, "build", "--kube-version", "1.24", "--offline", "--cache-dir", t.TempDir(), "-o", out, dir)
	if r.code != 0 {
		t.Fatalf("build --kube-version 1.24: %s", r)
	}
	info := testtree.Read(t, out)["capabilities-0.3.0-1.build.yaml"]
	for _, w := range []string{"kubeVersion: v1.24.0", "- policy/v1beta1/PodDisruptionBudget", "- policy/v1/PodDisruptionBudget"} {
		if !strings.Contains(info, w) {
			t.Errorf("BuildInfo lacks %q:\n%s", w, info)
		}
	}
	r = kbuild(t, repoRoot, nil, "validate", "--kube-version", "1.18", "--offline", "--cache-dir", t.TempDir(), dir)
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, `chart capabilities requires kubeVersion ">=1.19.0-0", which Kubernetes v1.18.0 does not satisfy`) {
		t.Errorf("validate --kube-version 1.18: %s", r)
	}
}
