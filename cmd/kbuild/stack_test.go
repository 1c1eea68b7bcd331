package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"helm.sh/helm/v3/pkg/ignore"

	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/spec"
)

// stackImages are the upstream images of the Foreman stack recipes
// (../shared/fixtures/upstream/IMAGES.md), by the name the test pushes a
// stand-in under, with the reference the recipes write.
var stackImages = map[string]string{
	"foreman":            "quay.io/foreman/foreman:nightly@sha256:9c77128c7acd629c62686a9119816d6f6b7726cd6492d9eaa894d54c345c4941",
	"pulp":               "quay.io/foreman/pulp:foreman-nightly@sha256:c3d32a385d09225c40f70d60128fcf62c94cb669536b10ccbadc0ec8ac4afa6b",
	"candlepin":          "quay.io/foreman/candlepin:foreman-nightly@sha256:b9fe6c5f161132b39982e1951e8b4a16bf00d2565ecb17e53b13b56196a1f280",
	"foreman-proxy":      "quay.io/foreman/foreman-proxy:nightly@sha256:244c756844a137990779ad153998c426eb0326d8d6f376192ea6e84947affd47",
	"nginx-unprivileged": "docker.io/nginxinc/nginx-unprivileged:stable-alpine",
}

// stackRecipes are the recipes of the Foreman stack, the set last.
var stackRecipes = []string{"candlepin", "foreman", "pulp", "smart-proxy", "foreman-stack"}

// foremanStack is the Foreman stack's recipes copied into a work
// directory, pointing at a chart repository served by git daemon on
// loopback and at stand-in images in the real registry.
type foremanStack struct {
	work   string
	images map[string]string // stand-in name -> pinned reference in the registry
}

// newForemanStack serves testdata/foreman-kubernetes (charts of the
// upstream shape) by git daemon, pushes a random image for each upstream
// image, and copies recipes/ of the stack into work/recipes with the
// upstream locations and digests replaced by the local ones.
func newForemanStack(t testing.TB, reg string) *foremanStack {
	git := testenv.Tool(t, "git")
	work := t.TempDir()
	s := &foremanStack{work: work, images: map[string]string{}}
	for n, up := range stackImages {
		img, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		_, tag, _ := splitRef(up)
		ref, _ := name.NewTag(reg+"/upstream/"+n+":"+tag, name.Insecure)
		if err := remote.Write(ref, img); err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		s.images[n] = ref.String() + "@" + d.String()
	}

	checkout := filepath.Join(work, "checkout")
	if err := copyDir(filepath.Join("testdata", "foreman-kubernetes"), checkout); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(work, "srv", "foreman-kubernetes.git")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", checkout},
		{"-C", checkout, "add", "-A"},
		{"-C", checkout, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "charts"},
		{"clone", "-q", "--bare", checkout, repo},
	} {
		if out, err := exec.Command(git, args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	commit, err := exec.Command(git, "-C", checkout, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	port := testenv.GitDaemon(t, filepath.Join(work, "srv"))

	for _, r := range stackRecipes {
		dir := filepath.Join(work, "recipes", r)
		if err := copyDir(filepath.Join(repoRoot, "recipes", r), dir); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "recipe.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		rec := strings.ReplaceAll(string(data), "https://github.com/jakduch/foreman-kubernetes", fmt.Sprintf("git://127.0.0.1:%d/foreman-kubernetes.git", port))
		rec = strings.ReplaceAll(rec, "819e79e9cc0c8bb7db46a2343137b79911dd0ecb", strings.TrimSpace(string(commit)))
		for n, up := range stackImages {
			local := s.images[n]
			upRepo, upTag, upDigest := splitRef(up)
			localRepo, localTag, localDigest := splitRef(local)
			upValue, localValue := upTag, localTag+"@"+localDigest
			if upDigest != "" {
				upValue += "@" + upDigest
			}
			rec = strings.ReplaceAll(rec, up, local)
			rec = strings.ReplaceAll(rec, "repository: "+upRepo+"\n", "repository: "+localRepo+"\n")
			rec = strings.ReplaceAll(rec, fmt.Sprintf("tag: %q", upValue), fmt.Sprintf("tag: %q", localValue))
			rec = strings.ReplaceAll(rec, "tag: "+upValue+"\n", fmt.Sprintf("tag: %q\n", localValue))
		}
		if strings.Contains(rec, "quay.io/") || strings.Contains(rec, "docker.io/") {
			t.Fatalf("recipes/%s still names an upstream image after the replacements:\n%s", r, rec)
		}
		if err := os.WriteFile(filepath.Join(dir, "recipe.yaml"), []byte(rec), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// splitRef splits repo:tag[@digest].
func splitRef(ref string) (repo, tag, digest string) {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref, digest = ref[:i], ref[i+1:]
	}
	i := strings.LastIndex(ref, ":")
	return ref[:i], ref[i+1:], digest
}

// helmTemplate pulls the chart by its manifest digest with helm and
// renders it as release in namespace.
func helmTemplate(t *testing.T, helm, chartRef, manifest, release, namespace string) string {
	t.Helper()
	ref := strings.TrimPrefix(chartRef, "oci://")
	repo := ref[:strings.LastIndex(ref, ":")]
	pull := t.TempDir()
	cmd := exec.Command(helm, "pull", "oci://"+repo+"@"+manifest, "--plain-http", "-d", pull)
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helm pull %s: %v\n%s", chartRef, err, out)
	}
	files, _ := filepath.Glob(filepath.Join(pull, "*.tgz"))
	if len(files) != 1 {
		t.Fatalf("helm pull %s wrote %v", chartRef, files)
	}
	out, err := exec.Command(helm, "template", release, files[0], "--namespace", namespace, "--include-crds").CombinedOutput()
	if err != nil {
		t.Fatalf("helm template %s: %v\n%s", chartRef, err, out)
	}
	return string(out)
}

// rendered is what a chart's rendering holds: "Kind name" objects by the
// component label they carry, and the images its containers run.
type rendered struct {
	objects map[string][]string
	images  []string
	// docs are the rendered objects by "Kind name".
	docs map[string]string
}

var (
	kindRE      = regexp.MustCompile(`(?m)^kind: (\S+)$`)
	nameRE      = regexp.MustCompile(`(?m)^  name: (\S+)$`)
	componentRE = regexp.MustCompile(`app\.kubernetes\.io/component: (\S+)`)
	imageRE     = regexp.MustCompile(`(?m)^\s+image: "?([^"\s]+)"?$`)
)

func parseRendered(out string) rendered {
	r := rendered{objects: map[string][]string{}, docs: map[string]string{}}
	for _, doc := range strings.Split(out, "\n---\n") {
		k, n := kindRE.FindStringSubmatch(doc), nameRE.FindStringSubmatch(doc)
		if k == nil || n == nil {
			continue
		}
		c := "(none)"
		if m := componentRE.FindStringSubmatch(doc); m != nil {
			c = m[1]
		}
		r.objects[c] = append(r.objects[c], k[1]+" "+n[1])
		r.docs[k[1]+" "+n[1]] = doc
		for _, m := range imageRE.FindAllStringSubmatch(doc, -1) {
			if !slices.Contains(r.images, m[1]) {
				r.images = append(r.images, m[1])
			}
		}
	}
	slices.Sort(r.images)
	return r
}

func (r rendered) components() []string {
	var out []string
	for c := range r.objects {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// TestForemanStack builds the Foreman stack as the recipes write it —
// foreman, pulp and candlepin from one chart of the upstream shape at a
// git commit, smart-proxy from the execution proxy chart, images by
// digest, and the foreman-stack release set — publishes it into the
// unstable suite of the real registry, checks with helm (Helm 3 and Helm
// 4) that each package renders only its component and runs the pinned digests, validates the
// set, attests it with a qa key and promotes it unstable → testing →
// stable, with the set's refusals on the way: a failed test, a suite's
// policy not met, evidence for other digests, expired evidence, and a
// withdrawn member.
func TestForemanStack(t *testing.T) {
	reg := testenv.Registry(t)
	helms := testenv.Helms(t)
	s := newForemanStack(t, reg)
	work := s.work
	epochEnv(t, time.Hour)

	keys := filepath.Join(work, "keys")
	os.MkdirAll(keys, 0o700)
	root, idx, qa := keygen(t, keys, "root"), keygen(t, keys, "index"), keygen(t, keys, "qa")
	rootFile := filepath.Join(keys, "root.yaml")
	if r := runInProcess("trust", "root", "new", "--root-key", root+".pub", "--index-key", idx+".pub", "--qa-key", qa+".pub", "-o", rootFile); r.code != 0 {
		t.Fatal(r)
	}
	if r := runInProcess("trust", "root", "sign", rootFile, "--sign-key", root+".key"); r.code != 0 {
		t.Fatal(r)
	}
	suites := filepath.Join(work, "suites.yaml")
	if err := os.WriteFile(suites, []byte(readFile(t, filepath.Join("testdata", "stack", "suites.yaml"))), 0o644); err != nil {
		t.Fatal(err)
	}

	// Publish builds every recipe from the git daemon and the registry into
	// the first suite.
	site, dist, cache := filepath.Join(work, "site"), filepath.Join(work, "dist"), filepath.Join(work, "cache")
	base := uniqueRepo(t, reg)
	r := kbuild(t, work, nil, "publish", "recipes", "--registry", base, "--plain-http", "--site", site, "-o", dist, "--cache-dir", cache,
		"--sign-key", idx+".key", "--root", rootFile, "--suites", suites)
	if r.code != 0 || !strings.Contains(r.stdout, "wrote "+filepath.Join(site, "unstable", "index.yaml")+": 5 packages, 5 versions") {
		t.Fatalf("publish: %s", r)
	}
	// The image sources are mirrored into the registry at their pinned
	// digests: skopeo reads each manifest back.
	skopeo := testenv.Tool(t, "skopeo")
	mirrored := regexp.MustCompile(`(?m)^mirrored (\S+) to (\S+)$`).FindAllStringSubmatch(r.stdout+r.stderr, -1)
	var origins []string
	for _, m := range mirrored {
		origins = append(origins, m[1])
		raw, err := exec.Command(skopeo, "inspect", "--raw", "--tls-verify=false", "docker://"+m[2]).Output()
		if err != nil {
			t.Fatalf("skopeo inspect %s: %v", m[2], err)
		}
		if _, _, want := splitRef(m[1]); spec.DigestOf(raw) != want {
			t.Errorf("%s mirrored to %s has the manifest digest %s", m[1], m[2], spec.DigestOf(raw))
		}
	}
	slices.Sort(origins)
	origins = slices.Compact(origins)
	sources := []string{s.images["candlepin"], s.images["foreman"], s.images["foreman-proxy"], s.images["pulp"]}
	if slices.Sort(sources); !slices.Equal(origins, sources) {
		t.Errorf("publish mirrored %v, want the image sources %v", origins, sources)
	}
	// kbuild fetch fills another cache without building; a build offline
	// from it needs nothing else, and gives the published chart.
	cache2 := filepath.Join(work, "cache2")
	if r := kbuild(t, work, nil, "fetch", "recipes/foreman", "--plain-http", "--cache-dir", cache2); r.code != 0 || strings.Count(r.stdout, "recipes/foreman ") != 4 || !strings.Contains(r.stdout, " git://127.0.0.1:") {
		t.Fatalf("fetch: %s", r)
	}
	if r := kbuild(t, work, nil, "build", "--offline", "recipes/foreman", "--registry", base, "--plain-http", "-o", filepath.Join(work, "dist2"), "--cache-dir", cache2); r.code != 0 || !strings.Contains(r.stderr, "already published with the same content") {
		t.Fatalf("build --offline from the fetched cache: %s", r)
	}

	// Each package renders only its component, running the pinned digests.
	// The three releases of the one upstream chart name one another as
	// its single release does.
	want := map[string]struct {
		release    string
		components []string // the component labels of what it renders
		images     []string
	}{
		"candlepin": {"candlepin", []string{"candlepin"}, []string{s.images["candlepin"]}},
		"pulp": {"pulp", []string{"pulp-api", "pulp-content", "pulp-control-proxy", "pulp-storage"},
			[]string{s.images["nginx-unprivileged"], s.images["pulp"]}},
		// Foreman's release keeps the stack-wide files: the ConfigMaps, the
		// migration Jobs of all three, Pulp's registration and the
		// NetworkPolicies (which name the other components).
		"foreman": {"foreman", []string{"candlepin", "candlepin-config", "candlepin-migrate", "dynflow-worker", "foreman", "foreman-config", "foreman-migrate",
			"foreman-tmp", "katello-event-daemon", "pulp-api", "pulp-control-proxy", "pulp-migrate", "pulp-registration", "recurring-tasks", "smoke-test"},
			[]string{s.images["candlepin"], s.images["foreman"], s.images["pulp"]}},
		"smart-proxy": {"foreman-execution-proxy", []string{"execution-proxy"}, []string{s.images["foreman-proxy"]}},
	}
	renders := map[string]rendered{}
	for _, b := range readRecords(t, dist) {
		name := b.Record.Metadata.Name
		w, ok := want[name]
		if name == "foreman-stack" {
			if len(b.Info.Charts) != 0 {
				t.Errorf("the release set has charts: %+v", b.Info.Charts)
			}
			continue
		}
		if !ok || len(b.Info.Charts) != 1 {
			t.Fatalf("record %s: %+v", name, b.Info)
		}
		c := b.Info.Charts[0]
		for _, h := range helms {
			got := parseRendered(helmTemplate(t, h.Path, c.Ref, c.Manifest, w.release, "foreman"))
			renders[name] = got
			if !slices.Equal(got.components(), w.components) {
				t.Errorf("%s renders with %s the components %v, want %v:\n%v", name, h.Name, got.components(), w.components, got.objects)
			}
			if !slices.Equal(got.images, w.images) {
				t.Errorf("%s runs with %s %v, want the pinned %v", name, h.Name, got.images, w.images)
			}
		}
		if !slices.Equal(b.Record.Spec.Images, w.images) {
			t.Errorf("%s lists package.images %v, want %v", name, b.Record.Spec.Images, w.images)
		}
	}
	for _, obj := range []string{"Deployment foreman-foreman-stack-pulp-api", "Deployment foreman-foreman-stack-candlepin", "Service foreman-foreman-stack-candlepin", "PersistentVolumeClaim foreman-foreman-stack-pulp-storage"} {
		for _, c := range renders["foreman"].components() {
			if slices.Contains(renders["foreman"].objects[c], obj) {
				t.Errorf("foreman still renders %s, which is pulp's or candlepin's", obj)
			}
		}
	}
	if got := renders["candlepin"].objects["candlepin"]; !slices.Equal(got, []string{"NetworkPolicy foreman-foreman-stack-candlepin-candlepin", "Service foreman-foreman-stack-candlepin", "Deployment foreman-foreman-stack-candlepin"}) {
		t.Errorf("candlepin renders %v, want its NetworkPolicy and the Service and Deployment Foreman's katello.yaml names", got)
	}
	// Upstream's NetworkPolicies select the pods of its one release and
	// stay with foreman; pulp and candlepin bring their own, selecting the
	// pods of their release, and the ones Foreman calls admit Foreman's
	// components from the foreman release only.
	for _, tc := range []struct{ pkg, component, from string }{
		{"pulp", "pulp-content", "kubernetes.io/metadata.name: ingress-nginx"},
		{"pulp", "pulp-api", "app.kubernetes.io/component: pulp-control-proxy"},
		{"pulp", "pulp-control-proxy", "{key: app.kubernetes.io/instance, operator: In, values: [foreman]}"},
		{"candlepin", "candlepin", "{key: app.kubernetes.io/instance, operator: In, values: [foreman]}"},
	} {
		release := want[tc.pkg].release
		doc := renders[tc.pkg].docs["NetworkPolicy foreman-foreman-stack-"+release+"-"+tc.component]
		selects := fmt.Sprintf("  podSelector:\n    matchLabels:\n      app.kubernetes.io/instance: %s\n      app.kubernetes.io/component: %s\n", release, tc.component)
		if !strings.Contains(doc, selects) || !strings.Contains(doc, tc.from) {
			t.Errorf("%s has no NetworkPolicy selecting its %s pods and admitting %q:\n%s", tc.pkg, tc.component, tc.from, doc)
		}
	}
	if got := renders["pulp"].objects["pulp-control-proxy"]; !slices.Contains(got, "Service foreman-foreman-stack-pulp-control") {
		t.Errorf("pulp renders %v, want the control proxy Service Foreman's katello.yaml names", got)
	}

	// The set pins all four builds.
	for _, b := range readRecords(t, dist) {
		var reqs []string
		for _, q := range b.Record.Spec.Variants[0].Requires {
			if q.Capability != "" {
				reqs = append(reqs, "capability "+q.Capability)
				continue
			}
			reqs = append(reqs, q.Package+" "+q.Version)
		}
		switch b.Record.Metadata.Name {
		case "foreman", "pulp", "candlepin":
			// They need one another (see recipes/foreman): only the set
			// requires them, so kubepkg's Ready gate has no cycle.
			if len(reqs) != 0 {
				t.Errorf("%s requires %v", b.Record.Metadata.Name, reqs)
			}
		case "smart-proxy":
			if !slices.Equal(reqs, []string{"foreman ~3.15"}) {
				t.Errorf("smart-proxy requires %v", reqs)
			}
		case "foreman-stack":
			if !slices.Equal(reqs, []string{"candlepin =3.15.0+build.1", "foreman =3.15.0+build.2", "pulp =3.15.0+build.1", "smart-proxy =3.15.0+build.2",
				"capability build:candlepin@3.15.0+build.1", "capability build:foreman@3.15.0+build.2", "capability build:pulp@3.15.0+build.1", "capability build:smart-proxy@3.15.0+build.2"}) {
				t.Errorf("foreman-stack pins %v", reqs)
			}
		}
	}

	// validate, with the charts in the cache now, checks the rendered
	// charts against package.images, and the set against the recipes and
	// the published suite.
	r = kbuild(t, work, nil, "validate", "--offline", "--cache-dir", cache, "recipes")
	if r.code != 0 || !strings.Contains(r.stdout, "0 of 5 recipes failed") || strings.Contains(r.stdout, "not checked against the rendered charts") {
		t.Fatalf("validate --offline recipes: %s", r)
	}
	r = kbuild(t, work, nil, "validate", "--offline", "recipes/foreman-stack", "--index", filepath.Join(site, "unstable"), "--index-root", rootFile)
	if r.code != 0 || !strings.Contains(r.stdout, "recipes/foreman-stack: ok") {
		t.Fatalf("validate the set against unstable: %s", r)
	}
	uIndex := readFile(t, filepath.Join(site, "unstable", "index.yaml"))
	if !strings.Contains(uIndex, "sets:\n") || !strings.Contains(uIndex, "package: foreman-stack") {
		t.Errorf("unstable lists no set digest:\n%s", uIndex)
	}

	attest := func(result, env string, extra ...string) result {
		return runInProcess(append([]string{"attest", "foreman-stack@3.15.0", "--build", "2", "--result", result, "--env", env,
			"--sign-key", qa + ".key", "--root", rootFile, "--site", site, "--suites", suites}, extra...)...)
	}
	promote := func(to string, extra ...string) result {
		return runInProcess(append([]string{"promote", "foreman-stack@3.15.0", "--build", "2", "--to", to, "--root", rootFile,
			"--site", site, "--suites", suites, "--sign-key", idx + ".key"}, extra...)...)
	}
	passed := "--passed=install,upgrade,rollback"

	// The set's evidence is about every member's exact digests: the set's
	// spec and, for each member, its spec, its chart and its images (an
	// image two members run is one subject): 1 + 3 + 4 + 3 + 3.
	if r := attest("pass", "kubernetes=1.33,arch=amd64,runtime=containerd", passed, "--log", "https://ci.example/runs/1"); r.code != 0 ||
		!strings.Contains(r.stdout, "foreman-stack 3.15.0 build 2 pass on arch=amd64,kubernetes=1.33,runtime=containerd, 14 subjects from "+filepath.Join(site, "unstable", "index.yaml")) {
		t.Fatalf("attest the set: %s", r)
	}
	// Then, in order: evidence attested (or other preparation), the set
	// promoted, and what promote says. A refusal writes no suite.
	amd134, arm134 := "kubernetes=1.34,arch=amd64,runtime=containerd", "kubernetes=1.34,arch=arm64,runtime=containerd"
	armFile := filepath.Join(site, "evidence", "foreman-stack-3.15.0-2", "arch=arm64,kubernetes=1.34,runtime=containerd.intoto.json")
	for _, step := range []struct {
		what    string
		attest  []string // result, environment and flags; none when empty
		prepare func()
		to      string
		ok      bool
		want    []string
	}{
		{what: "a failure blocks the set, whatever passed beside it", attest: []string{"fail", amd134, "--failed=upgrade"}, to: "testing",
			want: []string{"foreman-stack 3.15.0 build 2 failed its tests on arch=amd64,kubernetes=1.34,runtime=containerd"}},
		{what: "the re-run passes; its evidence replaces the failure's", attest: []string{"pass", amd134, passed}, to: "testing", ok: true,
			want: []string{"promoted foreman-stack 3.15.0 build 2 from unstable to testing: 5 version(s) copied"}},
		{what: "stable's policy needs arm64 too", to: "stable",
			want: []string{"promotion refused: foreman-stack 3.15.0 build 2 does not meet the policy", "no pass on arm64"}},
		{what: "evidence for other digests counts for nothing", prepare: func() {
			// The same recipes published under another registry path: the
			// same names, versions and builds with other charts. A pass
			// there is not a pass here.
			site2 := filepath.Join(work, "site2")
			if r := kbuild(t, work, nil, "publish", "recipes", "--registry", uniqueRepo(t, reg), "--plain-http", "--site", site2, "-o", filepath.Join(work, "dist-other"),
				"--cache-dir", cache, "--sign-key", idx+".key", "--root", rootFile, "--suites", suites); r.code != 0 {
				t.Fatalf("publish elsewhere: %s", r)
			}
			if r := runInProcess("attest", "foreman-stack@3.15.0", "--build", "2", "--result", "pass", "--env", arm134, passed,
				"--sign-key", qa+".key", "--root", rootFile, "--site", site2, "--suites", suites); r.code != 0 {
				t.Fatalf("attest the set published elsewhere: %s", r)
			}
			other := readFile(t, filepath.Join(site2, strings.TrimPrefix(armFile, site)))
			if err := os.WriteFile(armFile, []byte(other), 0o644); err != nil {
				t.Fatal(err)
			}
		}, to: "stable", want: []string{"no pass on arm64", "evidence refused: the evidence for foreman-stack 3.15.0 build 2 is not about what the index pins: subject oci://"}},
		// Issued at SOURCE_DATE_EPOCH, an hour ago, for half an hour.
		{what: "expired evidence counts for nothing", attest: []string{"pass", arm134, passed, "--expires", "30m"}, to: "stable",
			want: []string{"expired on", "no pass on arm64"}},
		{what: "a pass on arm64 meets stable's policy", attest: []string{"pass", arm134, passed}, to: "stable", ok: true,
			want: []string{"promoted foreman-stack 3.15.0 build 2 from testing to stable: 5 version(s) copied"}},
	} {
		if len(step.attest) > 0 {
			if r := attest(step.attest[0], step.attest[1], step.attest[2:]...); r.code != 0 {
				t.Fatalf("%s: attest %v: %s", step.what, step.attest, r)
			}
		}
		if step.prepare != nil {
			step.prepare()
		}
		index := filepath.Join(site, step.to, "index.yaml")
		before, _ := os.ReadFile(index)
		r := promote(step.to, "--allow-new")
		out := r.stdout
		if !step.ok {
			out = r.stderr
		}
		if (r.code == 0) != step.ok {
			t.Fatalf("%s: promote into %s: %s", step.what, step.to, r)
		}
		mustContain(t, step.what, out, step.want...)
		if after, _ := os.ReadFile(index); !step.ok && string(after) != string(before) {
			t.Fatalf("%s: a refused promotion changed %s", step.what, index)
		}
	}

	// Each suite is a complete kubepkg index under the one root, holding
	// the same entries and set digest.
	digests := regexp.MustCompile(`(?m)^\s+digest: (sha256:[0-9a-f]{64})$`)
	all := func(x string) []string {
		var out []string
		for _, m := range digests.FindAllStringSubmatch(x, -1) {
			out = append(out, m[1])
		}
		slices.Sort(out)
		return out
	}
	for _, su := range []string{"unstable", "testing", "stable"} {
		p := filepath.Join(site, su, "index.yaml")
		if r := runInProcess("repo", "verify", "--index", p, "--root-key", root+".pub", "--evidence", filepath.Join(site, "evidence")); r.code != 0 || !strings.Contains(r.stdout, "index.yaml: 5 packages, 5 versions") {
			t.Fatalf("repo verify %s: %s", su, r)
		}
		if got := all(readFile(t, p)); !slices.Equal(got, all(uIndex)) {
			t.Errorf("suite %s pins %v, unstable %v", su, got, all(uIndex))
		}
	}

	// A member withdrawn from every suite breaks the set everywhere:
	// validate names it, and the set cannot be promoted again.
	r = runInProcess("repo", "withdraw", "pulp@3.15.0", "--build", "1", "--reason", "CVE-2026-0002 in pulp", "--site", site, "--suites", suites, "--sign-key", idx+".key")
	if r.code != 0 || strings.Count(r.stdout, "withdrew pulp 3.15.0 build 1") != 3 {
		t.Fatalf("withdraw pulp from the suites: %s", r)
	}
	r = kbuild(t, work, nil, "validate", "--offline", "recipes/foreman-stack", "--index", filepath.Join(site, "stable"), "--index-root", rootFile)
	if r.code != 1 || !strings.Contains(r.stdout, "member pulp 3.15.0 build 1 was withdrawn (CVE-2026-0002 in pulp)") {
		t.Fatalf("validate the set with a withdrawn member: %s", r)
	}
	if r := promote("testing"); r.code != exitRefused || !strings.Contains(r.stderr, "pulp 3.15.0 build 1 was withdrawn") {
		t.Fatalf("promote the set with a withdrawn member: %s", r)
	}
}

// upstreamTemplates are the template files of charts/foreman-stack in the
// Foreman Kubernetes charts repository, as read in its history up to the
// commit the recipes pin. The fixture chart has the same files.
var upstreamTemplates = []string{
	"NOTES.txt", "_helpers.tpl", "autoscaling.yaml", "candlepin.yaml", "dependency-preflight.yaml",
	"dynflow-disruption-budgets.yaml", "dynflow.yaml", "egress-policies.yaml", "foreman-storage.yaml",
	"foreman.yaml", "ingress.yaml", "katello-event-daemon.yaml", "migrations.yaml", "network-policies.yaml",
	"prometheusrule.yaml", "pulp-control-proxy.yaml", "pulp-disruption-budgets.yaml", "pulp-registration.yaml",
	"pulp-storage.yaml", "pulp.yaml", "recovery.yaml", "recurring-tasks.yaml", "runtime-config.yaml",
	"tests/execution-proxy-registration.yaml", "tests/foreman-object-storage.yaml",
	"tests/pulp-object-storage.yaml", "tests/smoke-test.yaml",
}

// TestStackSplit checks that the .helmignore overlays of foreman, pulp and
// candlepin split the upstream chart's templates: every template goes to
// exactly one package, and the chart's metadata, values, helpers and
// files/ to all three.
func TestStackSplit(t *testing.T) {
	rules := map[string]*ignore.Rules{}
	for _, p := range []string{"candlepin", "foreman", "pulp"} {
		r, err := ignore.ParseFile(filepath.Join(repoRoot, "recipes", p, "overlay", ignore.HelmIgnore))
		if err != nil {
			t.Fatal(err)
		}
		r.AddDefaults()
		rules[p] = r
	}
	// keepers lists the packages whose chart keeps rel: neither it nor a
	// directory above it is ignored, as builder.Pack walks the chart.
	keepers := func(rel string, isDir bool) []string {
		var out []string
		for _, p := range []string{"candlepin", "foreman", "pulp"} {
			kept := true
			for d := filepath.Dir(rel); d != "."; d = filepath.Dir(d) {
				if rules[p].Ignore(d, dirInfo{d}) {
					kept = false
				}
			}
			if kept && !rules[p].Ignore(rel, fileInfo{rel, isDir}) {
				out = append(out, p)
			}
		}
		return out
	}
	chart := filepath.Join("testdata", "foreman-kubernetes", "charts", "foreman-stack")
	var templates []string
	err := filepath.WalkDir(chart, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(chart, p)
		rel = filepath.ToSlash(rel)
		got := keepers(rel, false)
		if tpl, ok := strings.CutPrefix(rel, "templates/"); ok && tpl != "_helpers.tpl" {
			templates = append(templates, tpl)
			if len(got) != 1 {
				t.Errorf("%s goes to %v; every template of the upstream chart goes to exactly one of foreman, pulp and candlepin", rel, got)
			}
		} else if len(got) != 3 {
			t.Errorf("%s goes to %v, want all three packages", rel, got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	templates = append(templates, "_helpers.tpl")
	slices.Sort(templates)
	want := slices.Clone(upstreamTemplates)
	slices.Sort(want)
	if !slices.Equal(templates, want) {
		t.Errorf("the fixture chart has the templates %v, upstream %v", templates, want)
	}
	for _, tc := range []struct{ file, pkg string }{
		{"templates/candlepin.yaml", "candlepin"}, {"templates/pulp.yaml", "pulp"}, {"templates/pulp-control-proxy.yaml", "pulp"},
		{"templates/foreman.yaml", "foreman"}, {"templates/migrations.yaml", "foreman"}, {"templates/runtime-config.yaml", "foreman"},
		{"templates/tests/smoke-test.yaml", "foreman"},
	} {
		if got := keepers(tc.file, false); !slices.Equal(got, []string{tc.pkg}) {
			t.Errorf("%s goes to %v, want %s", tc.file, got, tc.pkg)
		}
	}
}

// fileInfo and dirInfo are the os.FileInfo helm's ignore rules look at.
type fileInfo struct {
	name  string
	isDir bool
}

func (f fileInfo) Name() string       { return filepath.Base(f.name) }
func (f fileInfo) Size() int64        { return 0 }
func (f fileInfo) Mode() os.FileMode  { return 0o644 }
func (f fileInfo) ModTime() time.Time { return time.Time{} }
func (f fileInfo) IsDir() bool        { return f.isDir }
func (f fileInfo) Sys() any           { return nil }

type dirInfo struct{ name string }

func (d dirInfo) Name() string       { return filepath.Base(d.name) }
func (d dirInfo) Size() int64        { return 0 }
func (d dirInfo) Mode() os.FileMode  { return os.ModeDir | 0o755 }
func (d dirInfo) ModTime() time.Time { return time.Time{} }
func (d dirInfo) IsDir() bool        { return true }
func (d dirInfo) Sys() any           { return nil }

// TestStackBuildCapabilities: validate accepts the stack's recipes, whose
// members provide their build capability and whose set requires them, and
// refuses the set when a member's recipe drops its capability or keeps the
// one of a build it is no longer.
func TestStackBuildCapabilities(t *testing.T) {
	copyStack := func(t *testing.T) string {
		dir := t.TempDir()
		for _, r := range stackRecipes {
			if err := copyDir(filepath.Join(repoRoot, "recipes", r), filepath.Join(dir, r)); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	edit := func(t *testing.T, file, old, new string) {
		data := readFile(t, file)
		if !strings.Contains(data, old) {
			t.Fatalf("%s has no %q", file, old)
		}
		if err := os.WriteFile(file, []byte(strings.Replace(data, old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := copyStack(t)
	if r := runInProcess("validate", "--offline", dir); r.code != 0 || !strings.Contains(r.stdout, "0 of 5 recipes failed") {
		t.Fatalf("validate the stack: %s", r)
	}

	dropped := copyStack(t)
	edit(t, filepath.Join(dropped, "pulp", "recipe.yaml"), `provides: [pulp, "build:pulp@3.15.0+build.1"]`, `provides: [pulp]`)
	r := runInProcess("validate", "--offline", dropped)
	if r.code != 1 || !strings.Contains(r.stdout, `requires capability build:pulp@3.15.0+build.1, which member pulp 3.15.0 build 1 does not provide; add "build:pulp@3.15.0+build.1" to spec.package.provides of its recipe`) {
		t.Fatalf("validate with pulp's capability dropped: %s", r)
	}

	// A new build of pulp whose recipe kept the old capability, with the
	// set pinning it.
	stale := copyStack(t)
	edit(t, filepath.Join(stale, "pulp", "recipe.yaml"), "  build: 1\n", "  build: 2\n")
	edit(t, filepath.Join(stale, "foreman-stack", "recipe.yaml"), `version: "=3.15.0+build.1"
          - package: smart-proxy`, `version: "=3.15.0+build.2"
          - package: smart-proxy`)
	r = runInProcess("validate", "--offline", stale)
	if r.code != 1 || !strings.Contains(r.stdout, "pulp 3.15.0 build 2 provides build:pulp@3.15.0+build.1, another build's capability; a build provides only its own, build:pulp@3.15.0+build.2") {
		t.Fatalf("validate with pulp's build bumped but not its capability: %s", r)
	}
}
