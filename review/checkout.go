package review

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/sources"
)

// Bounds of a checked-out recipe: a recipe directory holds a recipe.yaml
// and the few local files it names, so these are far above any real one.
const (
	maxCheckout     = 1 << 30 // bytes of the git archive and of all files
	maxCheckoutFile = 512 << 20
)

// CheckoutRecipe writes the recipe directory dir as it is at git commit
// ref of its repository into a new temporary directory and returns the
// recipe's path there, with a function that removes it (never nil).
// baseDir is "" when the recipe does not exist at ref (a new package).
//
// The tree is read with git archive and unpacked by the extractor every
// source archive goes through (sources.ExtractArchive): an entry with an
// absolute name or "..", a symlink whose target leaves the recipe
// directory, anything written through a symlink, and content over 1 GiB
// are refused.
func CheckoutRecipe(ctx context.Context, dir, ref string) (baseDir string, cleanup func(), err error) {
	cleanup = func() {}
	git := func(args ...string) ([]byte, error) {
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return out, nil
	}
	prefix, err := git("rev-parse", "--show-prefix")
	if err != nil {
		return "", cleanup, fmt.Errorf("%s is not in a git work tree, so there is %w: %w", dir, ErrNoGitBase, err)
	}
	commit, err := git("rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return "", cleanup, fmt.Errorf("%q is not a commit of the recipes repository; fetch it first (git fetch origin main) or name another", ref)
	}
	at := strings.TrimSpace(string(commit))
	sub := strings.TrimSuffix(strings.TrimSpace(string(prefix)), "/")
	if _, err := git("cat-file", "-e", at+":"+path.Join(sub, builder.RecipeFile)); err != nil {
		return "", cleanup, nil
	}
	tree := at + ":" + sub
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return "", cleanup, err
	}
	tmp, err := os.MkdirTemp("", "kbuild-diff-base-")
	if err != nil {
		return "", cleanup, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	// git archive run in a subdirectory archives only that part of a tree.
	cmd := exec.CommandContext(ctx, "git", "-C", strings.TrimSpace(string(top)), "archive", "--format=tar", tree)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", cleanup, err
	}
	if err := cmd.Start(); err != nil {
		return "", cleanup, err
	}
	base := filepath.Join(tmp, "tree", filepath.Base(filepath.Clean(dir)))
	xerr := extractTree(ctx, out, filepath.Join(tmp, "archive.tar"), base)
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return "", cleanup, fmt.Errorf("git archive %s: %w: %s", tree, err, strings.TrimSpace(stderr.String()))
	}
	if xerr != nil {
		return "", cleanup, fmt.Errorf("git archive %s: %w", tree, xerr)
	}
	return base, cleanup, nil
}

// extractTree spools the tar stream r into the file spool (at most
// maxCheckout bytes) and unpacks it into dst, which it creates, with
// sources.ExtractArchive.
func extractTree(ctx context.Context, r io.Reader, spool, dst string) error {
	f, err := os.OpenFile(spool, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(spool)
	defer f.Close()
	n, err := io.Copy(f, io.LimitReader(r, maxCheckout+1))
	if err != nil {
		return err
	}
	if n > maxCheckout {
		return fmt.Errorf("the recipe directory is larger than %d bytes: %w", maxCheckout, sources.ErrTooLarge)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := sources.ExtractArchive(ctx, f, n, dst, maxCheckout, maxCheckoutFile); err != nil {
		os.RemoveAll(dst)
		return err
	}
	return nil
}
