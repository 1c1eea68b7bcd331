package patches

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Overlay copies every file under overlayDir into chartDir at the same
// relative path, adding new files and replacing existing ones; directories
// are created as needed. A symlink in the overlay is copied as the file it
// points to, and refused when it points outside overlayDir or at a directory.
// Nothing is written outside chartDir, even through symlinks in the chart.
// Files are written 0644, or 0755 when the overlay file is executable. The
// whole overlay is checked before anything is copied; a failure while
// copying (say, a file where the chart has a directory) can leave the chart
// partly overlaid.
func Overlay(chartDir, overlayDir string) error {
	src, err := os.OpenRoot(overlayDir)
	if err != nil {
		return fmt.Errorf("overlay %s: %w", overlayDir, err)
	}
	defer src.Close()
	dst, err := os.OpenRoot(chartDir)
	if err != nil {
		return fmt.Errorf("overlay into chart %s: %w", chartDir, err)
	}
	defer dst.Close()
	var files []string
	err = fs.WalkDir(src.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch t := d.Type(); {
		case t.IsDir():
			return nil
		case t&fs.ModeSymlink != 0:
			if err := insideDir(overlayDir, name); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		case !t.IsRegular():
			return fmt.Errorf("%s is a %s, not a regular file; an overlay holds only files and directories", name, t)
		}
		files = append(files, name)
		return nil
	})
	if err != nil {
		return fmt.Errorf("overlay %s: %w", overlayDir, err)
	}
	for _, name := range files {
		if err := copyFile(src, dst, name); err != nil {
			return fmt.Errorf("overlay %s: %s: %w", overlayDir, name, err)
		}
	}
	return nil
}

// insideDir checks that the symlink name in dir resolves to a regular file
// inside dir.
func insideDir(dir, name string) error {
	real, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return fmt.Errorf("broken symlink: %w", err)
	}
	base, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(base, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("symlink points to %s, outside the overlay directory; copy the file into the overlay instead", real)
	}
	if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
		return errors.New("symlink does not point to a regular file; an overlay may only link files")
	}
	return nil
}

// copyFile copies the file name from src to dst. It replaces a symlink at
// the destination rather than writing through it, and refuses to replace a
// directory with a file.
func copyFile(src, dst *os.Root, name string) error {
	in, err := src.Open(name) // os.Root refuses links leaving the overlay
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi.Mode()&0o111 != 0 {
		mode = 0o755
	}
	if err := dst.MkdirAll(path.Dir(name), 0o755); err != nil {
		return err
	}
	if old, err := dst.Lstat(name); err == nil {
		if old.IsDir() {
			return errors.New("the chart has a directory there; an overlay file cannot replace a directory")
		}
		if err := dst.Remove(name); err != nil {
			return err
		}
	}
	out, err := dst.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Remove deletes the chart files and directories matching patterns: slash-
// separated paths relative to chartDir with the wildcards of path.Match (* ?
// [ ]), e.g. "templates/tests/*", "templates/tests/" or "README.md". A
// matched directory is removed with its contents. A pattern that is absolute,
// leaves chartDir, is malformed or matches nothing is an error and nothing is
// removed. Nothing outside chartDir is ever removed.
func Remove(chartDir string, patterns []string) error {
	root, err := os.OpenRoot(chartDir)
	if err != nil {
		return fmt.Errorf("remove from chart %s: %w", chartDir, err)
	}
	defer root.Close()
	var names []string
	for _, p := range patterns {
		p = strings.TrimSuffix(p, "/") // "templates/tests/" names the directory
		if p == "." || !fs.ValidPath(p) {
			return fmt.Errorf("remove %q: not a relative slash-separated path inside the chart; write e.g. templates/tests/*", p)
		}
		m, err := glob(root, p)
		if err != nil {
			return fmt.Errorf("remove %q: %w", p, err)
		}
		if len(m) == 0 {
			return fmt.Errorf("remove %q: matches no file in chart %s; check the path (patterns are relative to the chart root)", p, chartDir)
		}
		names = append(names, m...)
	}
	slices.Sort(names)
	for _, n := range slices.Compact(names) {
		if err := root.RemoveAll(n); err != nil {
			return fmt.Errorf("remove %s from chart %s: %w", n, chartDir, err)
		}
	}
	return nil
}

// glob returns the names in root matching the pattern p. A name without
// wildcards is looked up with Lstat, so a symlink itself can be removed even
// when it points outside the chart.
func glob(root *os.Root, p string) ([]string, error) {
	if strings.ContainsAny(p, `*?[\`) {
		return fs.Glob(root.FS(), p)
	}
	if _, err := root.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return []string{p}, nil
}
