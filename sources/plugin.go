package sources

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"kbuild.dev/kbuild/internal/tailbuffer"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/spec"
)

var pluginName = regexp.MustCompile(`^[a-z0-9][-a-z0-9_.]*$`)

// PluginPrefixes are the program name prefixes a source plugin NAME is
// looked up by on PATH, in order.
var PluginPrefixes = []string{"kubepkg-source-", "kbuild-source-"}

// findPlugin returns the path of the program for plugin name.
func findPlugin(name string) (string, error) {
	if !pluginName.MatchString(name) {
		return "", fmt.Errorf("%q is not a plugin name (lower-case letters, digits, '-', '_', '.')", name)
	}
	for _, prefix := range PluginPrefixes {
		if p, err := exec.LookPath(prefix + name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("plugin %q: neither %s%s nor %s%s is on PATH; install it", name, PluginPrefixes[0], name, PluginPrefixes[1], name)
}

// runPlugin runs a source plugin by the kubepkg protocol: `with` as JSON on
// stdin; KUBEPKG_RECIPE_DIR, KUBEPKG_OUT (out, a fresh directory the
// plugin writes its result into), KUBEPKG_PACKAGE and KUBEPKG_VERSION in
// the environment; the recipe directory as working directory. The result
// is out; symlinks in it must stay inside it.
func (f *Fetcher) runPlugin(ctx context.Context, recipeDir, out string, src recipe.Source, info PluginInfo) (*Result, error) {
	exe, err := findPlugin(src.Plugin)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(recipeDir)
	if err != nil {
		return nil, err
	}
	with := []byte(src.With)
	if len(with) == 0 {
		with = []byte("{}")
	}
	ctx, cancel := context.WithTimeout(ctx, f.pluginTimeout)
	defer cancel()
	cmd, stderr := f.command(ctx, dir, exe)
	cmd.Env = append(os.Environ(), "KUBEPKG_RECIPE_DIR="+dir, "KUBEPKG_OUT="+out,
		"KUBEPKG_PACKAGE="+info.Package, "KUBEPKG_VERSION="+info.Version)
	cmd.Stdin = bytes.NewReader(with)
	cmd.Stdout = stderr
	f.logf("running plugin %s", exe)
	if err := cmd.Run(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("plugin %s: timed out after %s; its output ends:\n%s", exe, f.pluginTimeout, stderr)
		}
		return nil, commandError(ctx, "plugin "+exe, err, stderr)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("plugin %s wrote nothing to KUBEPKG_OUT; its output ends:\n%s", exe, stderr)
	}
	rout, err := filepath.EvalSymlinks(out)
	if err == nil {
		err = checkLinks(rout, rout)
	}
	if err != nil {
		return nil, fmt.Errorf("plugin %s output: %w", exe, err)
	}
	digest, err := HashDir(out)
	if err != nil {
		return nil, err
	}
	return &Result{Path: out, Resolved: spec.ResolvedSource{Kind: KindPlugin, Origin: src.Plugin, Digest: digest}}, nil
}

// command prepares a program to run in dir in its own process group, so
// that cancelling ctx kills it and whatever it started; its stderr goes to
// the returned tail buffer.
func (f *Fetcher) command(ctx context.Context, dir, prog string, args ...string) (*exec.Cmd, *tailbuffer.Buffer) {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	if prog == "git" {
		cmd.Env = gitEnv()
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	stderr := tailbuffer.New(tailSize)
	cmd.Stderr = stderr
	return cmd, stderr
}

// commandError describes a failed command with the end of its stderr.
func commandError(ctx context.Context, what string, err error, stderr *tailbuffer.Buffer) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out: %w", ctx.Err())
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		return fmt.Errorf("%s: %w; its output ends:\n%s", what, err, s)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// tailSize is how much of a command's output an error quotes: its end.
const tailSize = 4096
