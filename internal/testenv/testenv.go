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
	"crypto/sha256"
	"encoding/hex"
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

// FetchScript is the script that fetches the upstream fixtures, by pinned
// digest, into the fixture cache.
const FetchScript = "scripts/fetch-fixtures.sh"

// Upstream returns the directory holding the upstream files the fixture
// tests read (scripts/fixtures.txt lists them with their sha256), after
// checking that each of files is there with its pinned digest. It is, in
// order: $KBUILD_FIXTURES when set; ../shared/fixtures/upstream beside the
// repository when present; the cache scripts/fetch-fixtures.sh fills,
// ~/.cache/kbuild-fixtures. A file absent from it ends the test through
// MissingFixture; a file with other bytes than its pin fails the test.
func Upstream(t testing.TB, files ...string) string {
	t.Helper()
	dir := UpstreamDir()
	pins := upstreamPins(t)
	for _, f := range files {
		p := filepath.Join(dir, f)
		data, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			MissingFixture(t, p)
		}
		if err != nil {
			t.Fatal(err)
		}
		want, ok := pins[f]
		if !ok {
			t.Fatalf("fixture %s is not pinned in scripts/fixtures.txt; add its upstream URL and sha256 there", f)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Fatalf("fixture %s has sha256 %s, scripts/fixtures.txt pins %s; remove it and run %s", p, got, want, FetchScript)
		}
	}
	return dir
}

// UpstreamDir is where Upstream looks for the upstream fixtures (see
// Upstream), whether or not they are there.
func UpstreamDir() string {
	if d := os.Getenv("KBUILD_FIXTURES"); d != "" {
		return d
	}
	shared := filepath.Join(RepoRoot(), "..", "shared", "fixtures", "upstream")
	if _, err := os.Stat(shared); err == nil {
		return shared
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".cache", "kbuild-fixtures")
	}
	return shared
}

// upstreamPins reads scripts/fixtures.txt: file name → sha256.
func upstreamPins(t testing.TB) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "scripts", "fixtures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	pins := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && !strings.HasPrefix(f[0], "#") {
			pins[f[1]] = f[0]
		}
	}
	return pins
}

// MissingFixture ends a test whose fixture (path) is absent: it fails
// under CI (CI=true), where the fixtures are always present, and skips
// elsewhere, adding the test's name to
// $KBUILD_TEST_OUTPUT/skipped-fixtures.txt, which scripts/test.sh lists
// at the end of its run. Both messages name scripts/fetch-fixtures.sh.
func MissingFixture(t testing.TB, path string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("fixture %s is absent, and CI always has its fixtures: run %s (or check out the shared fixtures beside the repository as ../shared)", path, FetchScript)
	}
	if out := os.Getenv("KBUILD_TEST_OUTPUT"); out != "" {
		if f, err := os.OpenFile(filepath.Join(out, "skipped-fixtures.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(f, "%s (needs %s)\n", t.Name(), path)
			f.Close()
		}
	}
	t.Skipf("skipping: fixture %s is absent; run %s to fetch the upstream fixtures by pinned digest into %s (or set KBUILD_FIXTURES)", path, FetchScript, UpstreamDir())
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
