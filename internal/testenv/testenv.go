// Package testenv finds the real services and programs that end-to-end
// tests use: the OCI registry process and the helm (Helm 3), helm4, skopeo,
// trivy, git and chromium binaries that the test command (scripts/test.sh)
// installs and starts.
//
// When KBUILD_E2E=1 (set by scripts/test.sh and so by CI) a missing service
// or program fails the test; otherwise, for a quick `go test ./...` on a
// developer machine, the test is skipped with the reason.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Required reports whether end-to-end prerequisites must be present.
func Required() bool { return os.Getenv("KBUILD_E2E") == "1" }

func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if Required() {
		t.Fatalf("end-to-end prerequisite missing: "+format, args...)
	}
	t.Skipf("skipping: "+format+" (run scripts/test.sh to set it up)", args...)
}

// Registry returns host:port of the real OCI registry on loopback, from
// KBUILD_TEST_REGISTRY.
func Registry(t testing.TB) string {
	t.Helper()
	r := os.Getenv("KBUILD_TEST_REGISTRY")
	if r == "" {
		missing(t, "KBUILD_TEST_REGISTRY is not set (host:port of a registry on 127.0.0.1)")
	}
	return r
}

// Tool returns the path of a program: $KBUILD_TEST_<NAME> if set, else a
// lookup on PATH and in the tool cache that scripts/test.sh fills.
func Tool(t testing.TB, name string) string {
	t.Helper()
	env := "KBUILD_TEST_" + strings.ToUpper(name)
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if dir := os.Getenv("KBUILD_TOOLS"); dir != "" {
		if p := filepath.Join(dir, name); isExec(p) {
			return p
		}
	}
	missing(t, "%s not found (set %s or put it on PATH)", name, env)
	return ""
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Shared returns the path of ../shared beside the repository root. When it
// is absent (a user's fresh clone has none) the test is skipped, and named
// in the test command's summary (see MissingFixture); under CI (CI=true),
// which always has ../shared, it fails instead.
func Shared(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(), "..", "shared")
	if _, err := os.Stat(filepath.Join(dir, "spec")); err != nil {
		MissingFixture(t, dir)
	}
	return dir
}

// MissingFixture ends a test whose fixture under ../shared (path) is
// absent: it fails under CI (CI=true), where the fixtures are always
// present, and skips elsewhere, adding the test's name to
// $KBUILD_TEST_OUTPUT/skipped-fixtures.txt, which scripts/test.sh lists
// at the end of its run.
func MissingFixture(t testing.TB, path string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("fixture %s is absent, and CI always has ../shared beside the repository: check out the shared fixtures there", path)
	}
	if out := os.Getenv("KBUILD_TEST_OUTPUT"); out != "" {
		if f, err := os.OpenFile(filepath.Join(out, "skipped-fixtures.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(f, "%s (needs %s)\n", t.Name(), path)
			f.Close()
		}
	}
	t.Skipf("skipping: fixture %s is absent (put the shared fixtures beside the repository as ../shared to run this test)", path)
}

// RepoRoot returns the repository root.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Git runs git in dir with a fixed identity, no signing and main as the
// default branch, and fails the test on error; it returns the output.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(Tool(t, "git"), append([]string{"-c", "user.name=kbuild test", "-c", "user.email=test@kbuild.dev", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Helm is one major version of the real helm CLI.
type Helm struct {
	Name string // the subtest name: "helm3" or "helm4"
	Path string
}

// Helms returns the helm CLIs end-to-end checks run with: Helm 3 (the
// program "helm") and Helm 4 ("helm4", which scripts/test.sh builds beside
// it), each checked to be the major its name says. Run the check once per
// entry, as a subtest named by Name.
func Helms(t testing.TB) []Helm {
	t.Helper()
	var helms []Helm
	for _, h := range []struct{ name, tool, major string }{{"helm3", "helm", "v3."}, {"helm4", "helm4", "v4."}} {
		p := Tool(t, h.tool)
		out, err := exec.Command(p, "version", "--short").CombinedOutput()
		if err != nil {
			t.Fatalf("%s version --short: %v\n%s", p, err, out)
		}
		if v := strings.TrimSpace(string(out)); !strings.HasPrefix(v, h.major) {
			t.Fatalf("%s is %q, want Helm %s* (set KBUILD_TEST_%s)", p, v, h.major, strings.ToUpper(h.tool))
		}
		helms = append(helms, Helm{Name: h.name, Path: p})
	}
	return helms
}
