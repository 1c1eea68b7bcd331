package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCgoWarning: a cgo binary under ulimit -v says so and how to build
// the pure-Go one; a pure-Go binary, or one without a limit, says nothing.
func TestCgoWarning(t *testing.T) {
	for _, tc := range []struct {
		cgo   bool
		limit uint64
		want  string
	}{
		{true, 1 << 30, "built with cgo and runs under an address-space limit of 1024 MiB (ulimit -v), under which a cgo binary may fail to start; build it with CGO_ENABLED=0"},
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
