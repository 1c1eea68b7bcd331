package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/testenv"
)

// TestKubepkgRecipesBuildAll runs the build script of a kubepkg recipes
// repository (testdata/kubepkg/scripts/build-all.sh, with kubepkg's
// build and repo index flags) with kbuild installed as kubepkg, against
// the real registry; then signs the index, verifies it with every chart
// pulled back from the registry, and pulls a chart with helm.
func TestKubepkgRecipesBuildAll(t *testing.T) {
	reg := testenv.Registry(t)
	helm := testenv.Tool(t, "helm")
	work := t.TempDir()
	if err := copyDir(filepath.Join("testdata", "kubepkg"), work); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(kbuildBin, filepath.Join(bin, "kubepkg")); err != nil {
		t.Fatal(err)
	}
	// kubepkg's --registry-config: a Docker config with no credentials
	// (the test registry needs none).
	regConfig := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(regConfig, []byte(`{"auths": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base := uniqueRepo(t, reg)
	cmd := exec.Command("sh", filepath.Join(work, "scripts", "build-all.sh"))
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"REGISTRY="+base, "REGISTRY_CONFIG="+regConfig, "CACHE_DIR="+t.TempDir(), "SOURCE_DATE_EPOCH=", "CI=true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("build-all.sh with kbuild as kubepkg: %v\n%s", err, out)
	}
	for _, want := range []string{"wrote dist/local-path-0.0.31-1.yaml", "wrote dist/demo-operator-1.4.2-3.yaml", "wrote dist/platform-2.0.0-1.yaml",
		"charts match their pinned digests", "wrote site/index.yaml: 3 packages, 3 versions", "is not signed"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("build-all.sh output lacks %q:\n%s", want, out)
		}
	}
	// --work-dir kept every build.
	for _, p := range []string{"local-path/charts/local-path/Chart.yaml", "demo-operator/charts/operator/crds/widgets.yaml"} {
		if _, err := os.Stat(filepath.Join(work, "work", p)); err != nil {
			t.Errorf("--work-dir: %v", err)
		}
	}
	data, err := os.ReadFile(filepath.Join(work, "site", "index.yaml"))
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
	plat := x.Packages["platform"].Versions[0].Spec.Variants
	if len(plat) != 2 || strings.Join(plat[0].DependsOn, ",") != "local-path,demo-operator" {
		t.Errorf("platform variants = %+v", plat)
	}
	if got := x.Packages["local-path"].Versions[0].Spec.Provides; len(got) != 2 || got[0] != "storageclass:default" {
		t.Errorf("local-path provides %v", got)
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
	os.Remove(filepath.Join(work, "dist", "local-path-mirror.yaml"))

	// Signed and verified, every chart pulled back from the registry.
	key := keygen(t, t.TempDir(), "index")
	site := filepath.Join(work, "signed")
	if r := kbuild(t, work, nil, "repo", "index", "dist", "-o", filepath.Join(site, "index.yaml"), "--sign-key", key+".key"); r.code != 0 {
		t.Fatalf("repo index --sign-key: %s", r)
	}
	r := kbuild(t, work, nil, "repo", "verify", "--index", filepath.Join(site, "index.yaml"), "--public-key", key+".pub", "--charts", "--plain-http")
	if r.code != 0 || !strings.Contains(r.stderr, "2 charts match their pinned digests") {
		t.Fatalf("repo verify --charts: %s", r)
	}
	ch := x.Packages["local-path"].Versions[0].Spec.Variants[0].Components[0].Chart
	pull := exec.Command(helm, "pull", ch.Repository+"/"+ch.Name, "--version", ch.Version, "--plain-http", "-d", t.TempDir())
	pull.Env = append(os.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir())
	if out, err := pull.CombinedOutput(); err != nil {
		t.Fatalf("helm pull %s/%s %s: %v\n%s", ch.Repository, ch.Name, ch.Version, err, out)
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
