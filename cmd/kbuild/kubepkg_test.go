package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/testenv"
)

// TestKubepkgRecipesBuildAll runs kubepkg-recipes' CI flow with kbuild
// installed as kubepkg, against the real registry: the steps of its
// publish workflow (testdata/kubepkg/.github/workflows/publish.yaml, whose
// env it takes) run its scripts/build-all.sh (a re-creation of the real
// one: the same KUBEPKG_FLAGS to every build and to repo index --merge
// "$BASE_INDEX") twice. The first publish starts the repository
// (KBUILD_ALLOW_NEW=1, BASE_INDEX not there yet); the second, after a
// recipe's build is bumped, merges over the first's site served over
// HTTP, its key from KBUILD_SIGN_KEY. Without the key the second refuses
// with a short hint, not the whole help. Then the index's entries, every
// chart pulled back by repo verify --charts, and helm pull by version with
// Helm 3 and Helm 4.
func TestKubepkgRecipesBuildAll(t *testing.T) {
	reg := testenv.Registry(t)
	helms := testenv.Helms(t)
	work := t.TempDir()
	if err := copyDir(filepath.Join("testdata", "kubepkg"), work); err != nil {
		t.Fatal(err)
	}
	wf, err := os.ReadFile(filepath.Join(work, ".github", "workflows", "publish.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"BASE_INDEX: https://", "KBUILD_SIGN_KEY: ${{ secrets.KBUILD_SIGN_KEY }}", "KBUILD_ALLOW_NEW: ${{ vars.KBUILD_ALLOW_NEW }}",
		"run: scripts/build-all.sh", "path: _site", `ln -s "$(go env GOPATH)/bin/kbuild" "$(go env GOPATH)/bin/kubepkg"`} {
		if !strings.Contains(string(wf), want) {
			t.Errorf("publish.yaml lacks %q", want)
		}
	}
	bin := t.TempDir()
	if err := os.Symlink(kbuildBin, filepath.Join(bin, "kubepkg")); err != nil {
		t.Fatal(err)
	}
	key := keygen(t, t.TempDir(), "index")
	pem, err := os.ReadFile(key + ".key")
	if err != nil {
		t.Fatal(err)
	}
	// GitHub Pages: what the last run uploaded from _site, served over HTTP.
	pages := t.TempDir()
	srv := httptest.NewServer(http.FileServer(http.Dir(pages)))
	defer srv.Close()
	base := uniqueRepo(t, reg)
	publish := func(extra ...string) (string, error) {
		cmd := exec.Command("bash", filepath.Join(work, "scripts", "build-all.sh"))
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"REGISTRY="+base, "BASE_INDEX="+srv.URL+"/index.yaml", "KUBEPKG_FLAGS=--plain-http",
			"SOURCE_DATE_EPOCH=", "CI=true", "KBUILD_ALLOW_NEW=", "KBUILD_SIGN_KEY=")
		cmd.Env = append(cmd.Env, extra...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	deploy := func() {
		os.RemoveAll(pages)
		if err := copyDir(filepath.Join(work, "_site"), pages); err != nil {
			t.Fatal(err)
		}
	}

	out, err := publish("KBUILD_SIGN_KEY="+string(pem), "KBUILD_ALLOW_NEW=1")
	if err != nil {
		t.Fatalf("first publish (build-all.sh with kbuild as kubepkg): %v\n%s", err, out)
	}
	for _, want := range []string{"== recipes/local-path/", "wrote ", "signing with the key in KBUILD_SIGN_KEY", "3 packages, 3 versions"} {
		if !strings.Contains(out, want) {
			t.Errorf("first publish output lacks %q:\n%s", want, out)
		}
	}
	deploy()

	// The next change: local-path gets a new build.
	rf := filepath.Join(work, "recipes", "local-path", "recipe.yaml")
	data, _ := os.ReadFile(rf)
	os.WriteFile(rf, []byte(strings.Replace(string(data), "  build: 1\n", "  build: 2\n", 1)), 0o644)
	os.RemoveAll(filepath.Join(work, "_site"))

	// Without the key the base cannot be verified: rc 2, a short hint.
	out, err = publish()
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(out, "KBUILD_SIGN_KEY") ||
		!strings.Contains(out, "Run 'kbuild repo index --help' for usage and examples.") || strings.Contains(out, "Examples:") {
		t.Fatalf("second publish without KBUILD_SIGN_KEY: want exit 2 with a hint naming KBUILD_SIGN_KEY, not the help: %v\n%s", err, out)
	}
	out, err = publish("KBUILD_SIGN_KEY=" + string(pem))
	if err != nil {
		t.Fatalf("second publish over the first's site at %s: %v\n%s", srv.URL, err, out)
	}
	if !strings.Contains(out, "3 packages, 4 versions") {
		t.Errorf("second publish did not keep the first's versions:\n%s", out)
	}
	deploy()

	r := kbuild(t, work, nil, "repo", "verify", "--index", srv.URL+"/index.yaml", "--public-key", key+".pub", "--charts", "--plain-http")
	if r.code != 0 || !strings.Contains(r.stderr, "3 charts match their pinned digests") {
		t.Fatalf("repo verify --charts of the published site: %s", r)
	}
	data, err = os.ReadFile(filepath.Join(pages, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	x, err := index.ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range x.Packages {
		for _, v := range p.Versions {
			if d, _ := v.Spec.Digest(); d != v.Digest {
				t.Errorf("%s %s: digest %s, spec %s", name, v.Version, v.Digest, d)
			}
		}
	}
	if lp := x.Packages["local-path"].Versions; len(lp) != 2 || lp[0].Build != 2 || lp[1].Build != 1 {
		t.Errorf("local-path versions after two publishes: %+v", lp)
	}
	plat := x.Packages["platform"].Versions[0].Spec.Variants
	if len(plat) != 2 || strings.Join(plat[0].DependsOn, ",") != "local-path,demo-operator" {
		t.Errorf("platform variants = %+v", plat)
	}
	if got := x.Packages["local-path"].Versions[0].Spec.Provides; len(got) != 2 || got[0] != "storageclass:default" {
		t.Errorf("local-path provides %v", got)
	}
	ch := x.Packages["local-path"].Versions[0].Spec.Variants[0].Components[0].Chart
	for _, h := range helms {
		t.Run(h.Name, func(t *testing.T) {
			pull := exec.Command(h.Path, "pull", ch.Repository+"/"+ch.Name, "--version", ch.Version, "--plain-http", "-d", t.TempDir())
			pull.Env = append(os.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir())
			if out, err := pull.CombinedOutput(); err != nil {
				t.Fatalf("helm pull %s/%s %s: %v\n%s", ch.Repository, ch.Name, ch.Version, err, out)
			}
		})
	}
}

// TestKubepkgBuildFlags builds kubepkg recipes with kubepkg's own flags
// for build (--work-dir, --registry-config, --cache-dir) and repo index
// (--verify, -o -, unsigned), against the real registry, and pins the
// chart of a PackageSource written by hand by downloading it.
func TestKubepkgBuildFlags(t *testing.T) {
	reg := testenv.Registry(t)
	work := t.TempDir()
	if err := copyDir(filepath.Join("testdata", "kubepkg"), work); err != nil {
		t.Fatal(err)
	}
	// kubepkg's --registry-config: a Docker config with no credentials
	// (the test registry needs none).
	regConfig := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(regConfig, []byte(`{"auths": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base := uniqueRepo(t, reg)
	for _, r := range []string{"local-path", "demo-operator", "platform"} {
		if res := kbuild(t, work, []string{"SOURCE_DATE_EPOCH="}, "build", "recipes/"+r, "--registry", base, "-o", "dist", "--plain-http",
			"--work-dir", "work", "--registry-config", regConfig, "--cache-dir", t.TempDir()); res.code != 0 {
			t.Fatalf("build recipes/%s with kubepkg's flags: %s", r, res)
		}
	}
	// --work-dir kept every build.
	for _, p := range []string{"local-path/charts/local-path/Chart.yaml", "demo-operator/charts/operator/crds/widgets.yaml"} {
		if _, err := os.Stat(filepath.Join(work, "work", p)); err != nil {
			t.Errorf("--work-dir: %v", err)
		}
	}
	r := kbuild(t, work, nil, "repo", "index", "dist", "-o", "site/index.yaml", "--plain-http", "--verify")
	if r.code != 0 || !strings.Contains(r.stderr, "charts match their pinned digests") || !strings.Contains(r.stdout, "wrote site/index.yaml: 3 packages, 3 versions") {
		t.Fatalf("repo index --verify, unsigned: %s", r)
	}
	data, err := os.ReadFile(filepath.Join(work, "site", "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	x, err := index.ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}

	// A PackageSource written by hand, naming a published chart without
	// its digest: repo index pins it by downloading it, as kubepkg does.
	lp := x.Packages["local-path"].Versions[0].Spec.Variants[0].Components[0].Chart
	hand := fmt.Sprintf(`apiVersion: kubepkg.dev/v1
kind: PackageSource
metadata:
  name: local-path-mirror
spec:
  version: 0.0.31
  build: 1
  variants:
    - name: default
      components:
        - name: provisioner
          chart:
            repository: %s
            name: %s
            version: %s
`, lp.Repository, lp.Name, lp.Version)
	if err := os.WriteFile(filepath.Join(work, "dist", "local-path-mirror.yaml"), []byte(hand), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := kbuild(t, work, nil, "repo", "index", "dist", "-o", "-", "--plain-http"); r.code != 0 || !strings.Contains(r.stdout, "\n  local-path-mirror:\n") ||
		strings.Count(r.stdout, "digest: "+lp.Digest) != 2 || !strings.Contains(r.stderr, "pinned chart "+lp.Repository+"/"+lp.Name+" "+lp.Version+" at "+lp.Digest) {
		t.Fatalf("repo index of a PackageSource without a chart digest (want %s twice): %s", lp.Digest, r)
	}
}

// TestRepoIndexRelocate moves a published repository's charts to another
// registry path with kubepkg's --relocate against the real registry: the
// charts are copied there (rebuilt, same bytes) first, and a move to a
// path where they are not is refused.
func TestRepoIndexRelocate(t *testing.T) {
	reg := testenv.Registry(t)
	from, to, empty := uniqueRepo(t, reg), uniqueRepo(t, reg), uniqueRepo(t, reg)
	work, cache := t.TempDir(), t.TempDir()
	key := keygen(t, work, "index")
	for _, base := range []string{from, to} {
		if r := kbuild(t, repoRoot, nil, "build", "examples/smart-proxy", "--registry", base, "--plain-http", "-o", filepath.Join(work, "dist-"+filepath.Base(base)), "--cache-dir", cache); r.code != 0 {
			t.Fatalf("build to %s: %s", base, r)
		}
	}
	site := filepath.Join(work, "site")
	if r := kbuild(t, work, nil, "repo", "index", "dist-"+filepath.Base(from), "-o", filepath.Join(site, "index.yaml"), "--sign-key", key+".key"); r.code != 0 {
		t.Fatalf("repo index: %s", r)
	}
	none := filepath.Join(work, "none")
	os.MkdirAll(none, 0o755)
	moved := filepath.Join(work, "moved")
	r := kbuild(t, work, nil, "repo", "index", none, "-o", filepath.Join(moved, "index.yaml"), "--sign-key", key+".key",
		"--index", filepath.Join(site, "index.yaml"), "--public-key", key+".pub", "--relocate", from+"="+to, "--plain-http")
	if r.code != 0 || !strings.Contains(r.stderr, "relocated 1 published versions; 1 charts are at their new place") {
		t.Fatalf("repo index --relocate: %s", r)
	}
	data, _ := os.ReadFile(filepath.Join(moved, "index.yaml"))
	if !strings.Contains(string(data), "repository: "+to+"/smart-proxy") || strings.Contains(string(data), from) {
		t.Errorf("relocated index:\n%s", data)
	}
	if r := kbuild(t, work, nil, "repo", "verify", "--index", filepath.Join(moved, "index.yaml"), "--public-key", key+".pub", "--charts", "--plain-http"); r.code != 0 {
		t.Fatalf("repo verify --charts of the relocated index: %s", r)
	}
	r = kbuild(t, work, nil, "repo", "index", none, "-o", filepath.Join(work, "bad", "index.yaml"), "--sign-key", key+".key",
		"--index", filepath.Join(site, "index.yaml"), "--public-key", key+".pub", "--relocate", from+"="+empty, "--plain-http")
	if r.code != 1 || !strings.Contains(r.stderr, "1 of 1 moved charts are not at their new place") {
		t.Fatalf("relocate to a path without the charts: %s", r)
	}
	if _, err := os.Stat(filepath.Join(work, "bad", "index.yaml")); err == nil {
		t.Error("a refused relocation wrote an index")
	}
}
