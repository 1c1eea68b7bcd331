package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/internal/testenv"
)

// cosignVerify runs the real cosign CLI's verify of ref with the public
// key pub, offline (key-based: no Rekor entry, no Sigstore TUF root), as
// Flux's verify.provider: cosign does with the key in a Secret.
func cosignVerify(t *testing.T, pub, ref string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Tool(t, "cosign"), "verify", "--key", pub, "--insecure-ignore-tlog=true", "--allow-http-registry", ref)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "TUF_ROOT="+filepath.Join(home, "tuf"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestBuildSignsCharts: kbuild build --registry with --sign-key pushes
// charts that the real cosign verifies with the repository's public key;
// a stranger's key is refused, and so is a chart built without a key.
func TestBuildSignsCharts(t *testing.T) {
	reg := testenv.Registry(t)
	keys := t.TempDir()
	idx, stranger := keygen(t, keys, "index"), keygen(t, keys, "stranger")
	charts := func(args ...string) []string {
		t.Helper()
		out := t.TempDir()
		r := kbuild(t, repoRoot, []string{"SOURCE_DATE_EPOCH=1700000000"}, append([]string{"build", "examples/smart-proxy", "--registry", uniqueRepo(t, reg), "--plain-http", "-o", out, "--cache-dir", filepath.Join(keys, "cache")}, args...)...)
		if r.code != 0 {
			t.Fatalf("kbuild build: %s", r)
		}
		var refs []string
		for _, b := range readRecords(t, out) {
			for _, c := range b.Info.Charts {
				ref := strings.TrimPrefix(c.Ref, "oci://")
				refs = append(refs, ref[:strings.LastIndex(ref, ":")]+"@"+c.Manifest)
			}
		}
		if len(refs) == 0 {
			t.Fatalf("kbuild build pushed no chart: %s", r)
		}
		return refs
	}
	for _, ref := range charts("--sign-key", idx+".key") {
		if out, err := cosignVerify(t, idx+".pub", ref); err != nil || !strings.Contains(out, "The signatures were verified against the specified public key") {
			t.Errorf("cosign verify %s with the repository key: %v\n%s", ref, err, out)
		}
		if out, err := cosignVerify(t, stranger+".pub", ref); err == nil {
			t.Errorf("cosign verify %s with a stranger's key passed:\n%s", ref, out)
		}
	}
	for _, ref := range charts() {
		if out, err := cosignVerify(t, idx+".pub", ref); err == nil {
			t.Errorf("cosign verify %s passed for a chart built without --sign-key:\n%s", ref, out)
		}
	}
}
