package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/testenv"
)

// TestRebuildCheck publishes the examples on "machine A" and rebuilds them
// on "machine B" (another directory, HOME, TZ, umask and cache): every
// recipe must MATCH; a changed overlay file is named.
func TestRebuildCheck(t *testing.T) {
	reg := testenv.Registry(t)
	a, b := t.TempDir(), t.TempDir()
	for _, w := range []string{a, b} {
		if err := copyDir(filepath.Join(repoRoot, "examples"), filepath.Join(w, "recipes")); err != nil {
			t.Fatal(err)
		}
	}
	if r := kbuild(t, a, nil, "repo", "keygen", "index"); r.code != 0 {
		t.Fatalf("keygen: %s", r)
	}
	r := kbuild(t, a, []string{"TZ=UTC", "HOME=" + t.TempDir()}, "publish", "recipes", "--registry", uniqueRepo(t, reg), "--plain-http", "--sign-key", "index.key", "--site", "site")
	if r.code != 0 {
		t.Fatalf("publish on machine A: %s", r)
	}
	index := filepath.Join(a, "site", "index.yaml")
	pub := filepath.Join(a, "index.pub")

	check := func(extra ...string) result {
		home := t.TempDir()
		cmd := exec.Command("sh", append([]string{"-c", `umask 077 && exec "$0" "$@"`, kbuildBin, "rebuild-check", "recipes/", "--index", index, "--public-key", pub, "--plain-http"}, extra...)...)
		cmd.Dir = b
		cmd.Env = append(os.Environ(), "TZ=America/Lima", "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, "cache"), "CI=true")
		out, err := cmd.Output()
		code := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			code = ee.ExitCode()
			out = append(out, ee.Stderr...)
		}
		return result{stdout: string(out), code: code}
	}
	r = check()
	if r.code != 0 || strings.Count(r.stdout, ": MATCH ") != 3 {
		t.Fatalf("rebuild-check on machine B: %s", r)
	}
	// Every version names the kbuild that built it, and a rebuild says so.
	this := strings.Fields(kbuild(t, b, nil, "version").stdout)[1]
	infos, _ := filepath.Glob(filepath.Join(a, "site", "build", "*.build.yaml"))
	for _, f := range infos {
		data, _ := os.ReadFile(f)
		if !strings.Contains(string(data), "\nbuilder: kbuild "+this+"\n") {
			t.Errorf("%s does not record the kbuild that built it (kbuild %s):\n%s", f, this, data)
		}
	}
	if len(infos) != 3 || strings.Count(r.stdout, "; published by kbuild "+this+"\n") != 3 {
		t.Errorf("rebuild-check does not say which kbuild published each version (%d build infos): %s", len(infos), r)
	}
	// Another kbuild release refuses to compare, naming both, unless
	// --other-kbuild; the bytes are then the same (nothing in the packing
	// changed between the two).
	other := filepath.Join(t.TempDir(), "kbuild")
	build := exec.Command("go", "build", "-ldflags", "-X main.release=v9.9.9", "-o", other, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ro := kbuildWith(t, other, b, nil, "rebuild-check", "recipes/", "--index", index, "--public-key", pub, "--plain-http")
	if ro.code != exitRefused || strings.Count(ro.stdout, ": REFUSED: ") != 3 || !strings.Contains(ro.stdout, "was built by another kbuild, kbuild "+this+"; this is kbuild v9.9.9") ||
		!strings.Contains(ro.stdout, "--other-kbuild") || !strings.Contains(ro.stdout, "3 of 3 recipes were published by another kbuild and not compared") {
		t.Fatalf("rebuild-check by another kbuild release: %s", ro)
	}
	ro = kbuildWith(t, other, b, nil, "rebuild-check", "recipes/", "--index", index, "--public-key", pub, "--plain-http", "--other-kbuild")
	if ro.code != 0 || strings.Count(ro.stdout, ": MATCH ") != 3 {
		t.Fatalf("rebuild-check --other-kbuild: %s", ro)
	}
	os.WriteFile(filepath.Join(b, "recipes", "smart-proxy", "overlay", "templates", "NOTES.txt"), []byte("changed\n"), 0o644)
	r = check()
	if r.code != 1 || !strings.Contains(r.stdout, "recipes/smart-proxy: DIFFER: chart smart-proxy: archive published sha256:") ||
		!strings.Contains(r.stdout, "first difference: smart-proxy/templates/NOTES.txt (content differs") ||
		!strings.Contains(r.stdout, "1 of 3 recipes do not rebuild to what is published") {
		t.Fatalf("rebuild-check with a changed overlay: %s", r)
	}
	// Sources no longer in the cache, offline: a clear error, not a match.
	if err := copyDir(filepath.Join(repoRoot, "recipes", "kubevirt"), filepath.Join(b, "more", "kubevirt")); err != nil {
		t.Fatal(err)
	}
	r = kbuild(t, b, nil, "rebuild-check", "more/kubevirt", "--index", index, "--public-key", pub, "--offline", "--cache-dir", t.TempDir())
	if r.code != 1 || !strings.Contains(r.stdout, "more/kubevirt: FAILED: ") || !strings.Contains(r.stdout, "kbuild fetch") {
		t.Fatalf("rebuild-check --offline with an empty cache: %s", r)
	}
}
