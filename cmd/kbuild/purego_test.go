package main

import (
	"bytes"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/testenv"
)

// TestCgoWarning: a cgo binary under ulimit -v says so and how to build
// the pure-Go one; a pure-Go binary, or one without a limit, says nothing.
func TestCgoWarning(t *testing.T) {
	for _, tc := range []struct {
		cgo   bool
		limit uint64
		want  string
	}{
		{true, 1 << 30, "built with cgo and runs under an address-space limit of 1024 MiB (ulimit -v), of which each thread's C stack takes 8 MiB, unlike the release binary's; build it with CGO_ENABLED=0"},
		{true, 0, ""},
		{false, 1 << 30, ""},
	} {
		var b bytes.Buffer
		cgoWarning(&b, tc.cgo, tc.limit)
		if got := b.String(); (tc.want == "" && got != "") || !strings.Contains(got, tc.want) {
			t.Errorf("cgoWarning(cgo %v, limit %d) = %q, want %q", tc.cgo, tc.limit, got, tc.want)
		}
	}
}

// goBuild matches a go build, go run or go install of kbuild on a line.
var goBuild = regexp.MustCompile(`\bgo (build|run|install) [^|;&]*cmd/kbuild`)

// TestPureGoEverywhere: every go build and go run of kbuild that users,
// CI and the tests run (README, CONTRIBUTING, the workflows, the scripts,
// the benchmarks' scripts, the recipes repository's workflow in testdata)
// sets CGO_ENABLED=0 on its line (a shell line continued with a backslash
// counts as one) or has it exported before, and the test command exports
// it for go test.
func TestPureGoEverywhere(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{"README.md", "CONTRIBUTING.md"}
	for _, glob := range []string{".github/workflows/*.yml", "scripts/*.sh", "bench/*/*.sh", "action.yml", "cmd/kbuild/testdata/*/.github/workflows/*.yaml"} {
		m, _ := filepath.Glob(filepath.Join(root, glob))
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, rel)
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		exported, continued := false, ""
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasSuffix(line, "\\") {
				continued += strings.TrimSuffix(line, "\\")
				continue
			}
			line, continued = continued+line, ""
			if strings.Contains(line, "export CGO_ENABLED=0") || strings.Contains(line, "CGO_ENABLED: \"0\"") {
				exported = true
			}
			if goBuild.MatchString(line) && !exported && !strings.Contains(line, "CGO_ENABLED=0") {
				t.Errorf("%s line %d builds kbuild without CGO_ENABLED=0: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
	test, _ := os.ReadFile(filepath.Join(root, "scripts", "test.sh"))
	if !strings.Contains(string(test), "export CGO_ENABLED=0") {
		t.Error("scripts/test.sh does not export CGO_ENABLED=0 for go test")
	}
}

// TestBuiltPureGo: the test binary, built as scripts/test.sh builds it,
// has no cgo (the release binary is built the same way).
func TestBuiltPureGo(t *testing.T) {
	if os.Getenv("KBUILD_E2E") == "" {
		t.Skip("scripts/test.sh sets CGO_ENABLED=0; a bare go test may use cgo")
	}
	if builtWithCgo {
		t.Fatal("the tests run a cgo build: scripts/test.sh must export CGO_ENABLED=0")
	}
	out, err := exec.Command("go", "env", "CGO_ENABLED").Output()
	if err != nil || strings.TrimSpace(string(out)) != "0" {
		t.Fatalf("go env CGO_ENABLED = %q, %v; want 0 under scripts/test.sh", out, err)
	}
}

// cgoStarts is how often TestCgoStartsUnderLimit starts the cgo binary:
// without the single malloc arena about one start in 13 failed (29 of 380
// on the shared machine, from one in 40 to one in seven a batch), so 60
// starts catch that binary 99 times in 100.
const cgoStarts = 60

// TestCgoStartsUnderLimit: kbuild built as a contributor's plain `go build`
// builds it on a machine with a C compiler (cgo) starts every time under
// ulimit -v 1 GiB, as the pure-Go release binary does: glibc makes no
// per-thread malloc arenas (purego_arena_linux.go). Where there is no C
// compiler, go build makes a pure-Go binary and the test has nothing to
// check; under CI and scripts/test.sh, which installs gcc, that fails.
func TestCgoStartsUnderLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ulimit -v and glibc's malloc arenas are Linux's")
	}
	cc := "gcc"
	if out, err := exec.Command("go", "env", "CC").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		cc = strings.Fields(string(out))[0]
	}
	if _, err := exec.LookPath(cc); err != nil {
		if os.Getenv("CI") == "true" || testenv.Required() {
			t.Fatalf("no C compiler %q to build kbuild with cgo: %v; scripts/test.sh installs gcc", cc, err)
		}
		t.Skipf("skipping: no C compiler %q to build kbuild with cgo (apt-get install gcc, or run scripts/test.sh)", cc)
	}
	bin := filepath.Join(t.TempDir(), "kbuild")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=1 go build ./cmd/kbuild: %v\n%s", err, out)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range info.Settings {
		if s.Key == "CGO_ENABLED" && s.Value != "1" {
			t.Fatalf("the binary was built with CGO_ENABLED=%s, want 1", s.Value)
		}
	}
	failed := 0
	for i := range cgoStarts {
		cmd := exec.Command("bash", "-c", `ulimit -v 1048576 && exec "$0" version`, bin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if out, err := cmd.Output(); err != nil || !strings.HasPrefix(string(out), "kbuild ") {
			failed++
			if failed == 1 {
				t.Errorf("start %d of %d under ulimit -v 1 GiB: kbuild version = %q, %v; stderr:\n%s", i+1, cgoStarts, out, err, firstLines(stderr.String(), 5))
			}
		}
	}
	if failed > 0 {
		t.Errorf("a cgo kbuild failed to start %d times in %d under ulimit -v 1 GiB", failed, cgoStarts)
	}
}

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
