package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/builder/render"
	"kbuild.dev/kbuild/internal/testenv"
)

// kbuildBin is the kbuild binary built once for the tests that run it as a
// separate process.
var kbuildBin string

func TestMain(m *testing.M) {
	render.WorkerMain()
	dir, err := os.MkdirTemp("", "kbuild-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kbuildBin = filepath.Join(dir, "kbuild")
	build := exec.Command("go", "build", "-o", kbuildBin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // the binary users get, under a bare go test too
	out, err := build.CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building kbuild: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one kbuild process did.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// kbuild runs the kbuild binary in dir with extra environment.
func kbuild(t testing.TB, dir string, env []string, args ...string) result {
	t.Helper()
	return kbuildWith(t, kbuildBin, dir, env, args...)
}

// kbuildWith runs the kbuild binary bin in dir with extra environment.
func kbuildWith(t testing.TB, bin, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CI=true")
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running kbuild: %v", err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// runInProcess runs kbuild's main logic in the test process.
func runInProcess(args ...string) result {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), &Env{Stdout: &stdout, Stderr: &stderr, Getenv: os.Getenv}, args)
	return result{stdout.String(), stderr.String(), code}
}

// TestHelpHasExamples checks that every command documents itself with a
// usage line and at least one commented example.
func TestHelpHasExamples(t *testing.T) {
	for _, l := range leaves() {
		p := l.path
		t.Run(strings.Join(p, "_"), func(t *testing.T) {
			r := runInProcess(append(p, "--help")...)
			if r.code != 0 {
				t.Fatalf("%s --help: %s", strings.Join(p, " "), r)
			}
			for _, want := range []string{"Usage:\n  kbuild " + strings.Join(p, " "), "Examples:", "  # "} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("%s --help lacks %q:\n%s", strings.Join(p, " "), want, r.stdout)
				}
			}
		})
	}
}

func TestUnknownCommand(t *testing.T) {
	r := runInProcess("biuld")
	if r.code != 2 || !strings.Contains(r.stderr, `unknown command "biuld"`) {
		t.Fatalf("kbuild biuld: %s", r)
	}
}

func TestVersion(t *testing.T) {
	if r := runInProcess("version"); r.code != 0 || strings.TrimSpace(r.stdout) == "" {
		t.Fatalf("kbuild version: %s", r)
	}
}

// repoRoot is the repository root, where examples/ lives.
var repoRoot = testenv.RepoRoot()
