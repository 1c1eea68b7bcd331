package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/testenv"
)

// TestAdoptHelmPushed moves a chart that another tool published to kbuild:
// the chart kbuild assembles is packaged and pushed by the real helm CLI,
// Helm 3 and Helm 4 each into a repository of its own (other archive
// bytes, helm's own Chart.yaml) to the real registry under
// the same version and build; kbuild build refuses it as different
// content, and with --adopt keeps it, pinning helm's archive digest.
func TestAdoptHelmPushed(t *testing.T) {
	reg := testenv.Registry(t)
	work, cache := t.TempDir(), t.TempDir()
	if r := kbuild(t, repoRoot, nil, "build", "examples/smart-proxy", "-o", filepath.Join(work, "local"), "--work-dir", filepath.Join(work, "w"), "--cache-dir", cache); r.code != 0 {
		t.Fatalf("local build: %s", r)
	}
	for _, h := range testenv.Helms(t) {
		t.Run(h.Name, func(t *testing.T) {
			adoptHelmPushed(t, h.Path, uniqueRepo(t, reg), filepath.Join(work, "w", "smart-proxy", "charts", "smart-proxy"), cache)
		})
	}
}

// adoptHelmPushed packages chart with the helm CLI helm, pushes it to
// base, and checks that kbuild build refuses it without --adopt and keeps
// helm's archive with it.
func adoptHelmPushed(t *testing.T, helm, base, chart, cache string) {
	work := t.TempDir()
	helmEnv := append(os.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_REGISTRY_CONFIG="+filepath.Join(t.TempDir(), "config.json"))
	pkgDir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(helm, args...)
		cmd.Env = helmEnv
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helm %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("package", chart, "-d", pkgDir)
	tgz, _ := filepath.Glob(filepath.Join(pkgDir, "*.tgz"))
	if len(tgz) != 1 {
		t.Fatalf("helm package wrote %v", tgz)
	}
	data, _ := os.ReadFile(tgz[0])
	sum := sha256.Sum256(data)
	helmDigest := "sha256:" + hex.EncodeToString(sum[:])
	run("push", tgz[0], base+"/smart-proxy", "--plain-http")

	out := filepath.Join(work, "dist")
	r := kbuild(t, repoRoot, nil, "build", "examples/smart-proxy", "--registry", base, "--plain-http", "-o", out, "--cache-dir", cache)
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "already published with different content") || !strings.Contains(r.stdout+r.stderr, "--adopt keeps it") {
		t.Fatalf("build over helm's chart without --adopt: %s", r)
	}
	r = kbuild(t, repoRoot, nil, "build", "examples/smart-proxy", "--registry", base, "--plain-http", "-o", out, "--cache-dir", cache, "--adopt")
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "adopted, keeping its archive digest "+helmDigest) {
		t.Fatalf("build --adopt: %s", r)
	}
	rec, _ := os.ReadFile(filepath.Join(out, "smart-proxy-3.14.0-1.yaml"))
	if !strings.Contains(string(rec), "digest: "+helmDigest) {
		t.Errorf("the record does not pin helm's archive %s:\n%s", helmDigest, rec)
	}
}
