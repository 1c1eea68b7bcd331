package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/chart"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/internal/controlplane"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/spec"
)

// pushTestChart pushes a one-Deployment chart running image to the test
// registry and returns its pin.
func pushTestChart(t *testing.T, registry, chartName, version, image string) spec.ChartRef {
	t.Helper()
	dir := filepath.Join(t.TempDir(), chartName)
	files := map[string]string{
		"Chart.yaml":  fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\n", chartName, version),
		"values.yaml": "{}\n",
		"templates/deployment.yaml": fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers: [{name: app, image: %[2]q}]
`, chartName, image),
	}
	for rel, body := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	arc, err := builder.Pack(dir, chartName, version, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	img, err := oci.ChartImage(arc.Data, &chart.Metadata{APIVersion: "v2", Name: chartName, Version: version}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(registry+"/kbuild-test/"+chartName+":"+version, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img); err != nil {
		t.Fatal(err)
	}
	return spec.ChartRef{Repository: "oci://" + registry + "/kbuild-test", Name: chartName, Version: version, Digest: arc.Digest}
}

// TestKbuildTestAttestPromote: 'kbuild test' qualifies a build from a
// signed index on a real control plane, writes JUnit and a step summary,
// signs the evidence with a qa key, and 'kbuild promote' accepts it into
// testing, whose policy it meets with the environment read from the
// cluster; a build whose pods run an unpinned image fails (exit 1) with
// signed fail evidence.
func TestKbuildTestAttestPromote(t *testing.T) {
	reg := testenv.Registry(t)
	c := controlplane.ForTest(t)
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	root, idx, qa := keygen(t, keys, "root"), keygen(t, keys, "index"), keygen(t, keys, "qa")
	site := filepath.Join(dir, "site")
	rootFile := filepath.Join(site, "unstable", "root.yaml")
	if r := runInProcess("trust", "root", "new", "--root-key", root+".pub", "--index-key", idx+".pub", "--qa-key", qa+".pub", "-o", rootFile); r.code != 0 {
		t.Fatal(r)
	}
	if r := runInProcess("trust", "root", "sign", rootFile, "--sign-key", root+".key"); r.code != 0 {
		t.Fatal(r)
	}
	pinned := "registry.example/acme/web:1@sha256:" + strings.Repeat("ab", 32)
	distDir := filepath.Join(dir, "dist")
	os.MkdirAll(distDir, 0o755)
	for _, v := range []struct{ version, image string }{{"1.0.0", pinned}, {"1.1.0", pinned}, {"2.0.0", "registry.example/acme/web:2"}} {
		ref := pushTestChart(t, reg, "web", v.version+"-1", v.image)
		rec := spec.PackageSource{APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind, Metadata: spec.RecordMetadata{Name: "web"},
			Spec: spec.PackageSpec{Version: v.version, Build: 1, Rollback: &spec.Rollback{Safe: true}, Images: []string{pinned},
				Variants: []spec.Variant{{Name: "default", Components: []spec.Component{{Name: "web", Chart: &ref, Install: &spec.Install{Namespace: "web"}}}}}}}
		b, err := dist.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(distDir, "web-"+v.version+"-1.yaml"), b, 0o644)
	}
	if r := repoIndex(t, distDir, filepath.Join(site, "unstable"), "--sign-key", idx+".key"); r.code != 0 {
		t.Fatal(r)
	}
	data, err := os.ReadFile("../../suite/testdata/suites.yaml")
	if err != nil {
		t.Fatal(err)
	}
	suites := filepath.Join(dir, "suites.yaml")
	os.WriteFile(suites, data, 0o644)

	evFile := filepath.Join(site, "evidence", "web-1.1.0-1", "kbuild-test.intoto.json")
	junit, summary := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "summary.md")
	test := func(target, out string) result {
		return kbuild(t, dir, nil, "test", target, "--build", "1", "--index", filepath.Join(site, "unstable"), "--public-key", idx+".pub",
			"--kubeconfig", c.Kubeconfig, "--plain-http", "--wait", "20s", "--junit", junit, "--summary", summary,
			"--attest", "--sign-key", qa+".key", "--root", rootFile, "-o", out)
	}
	r := test("web@1.1.0", evFile)
	if r.code != 0 {
		t.Fatalf("kbuild test: %s", r)
	}
	for _, want := range []string{"ok   install web 1.1.0 build 1", "ok   upgrade from web 1.0.0 build 1", "ok   rollback to web 1.0.0 build 1", evFile + ": web 1.1.0 build 1 pass on arch=amd64,kubernetes=1.37,"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if b, _ := os.ReadFile(junit); !strings.Contains(string(b), `failures="0"`) {
		t.Errorf("junit:\n%s", b)
	}
	if b, _ := os.ReadFile(summary); !strings.Contains(string(b), "kbuild test web 1.1.0 build 1: pass") {
		t.Errorf("summary:\n%s", b)
	}
	r = runInProcess("promote", "web@1.1.0", "--build", "1", "--to", "testing", "--root", rootFile, "--site", site, "--suites", suites, "--sign-key", idx+".key", "--allow-new")
	if r.code != 0 {
		t.Fatalf("promote with kbuild test's evidence: %s", r)
	}

	failFile := filepath.Join(dir, "fail.intoto.json")
	r = test("web@2.0.0", failFile)
	if r.code != exitFailed || !strings.Contains(r.stdout, "FAIL digests web 2.0.0 build 1") || !strings.Contains(r.stderr, "registry.example/acme/web:2, which is not pinned by digest") {
		t.Fatalf("kbuild test of an unpinned image: %s", r)
	}
	if b, err := os.ReadFile(failFile); err != nil || !strings.Contains(string(b), "payload") {
		t.Fatalf("no signed fail evidence: %v", err)
	}
	if r := runInProcess("repo", "verify", "--index", filepath.Join(site, "unstable"), "--public-key", idx+".pub"); r.code != 0 {
		t.Fatalf("the index after the tests: %s", r)
	}
	_ = context.Background
}
