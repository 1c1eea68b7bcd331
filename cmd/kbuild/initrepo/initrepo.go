// Package initrepo is what `kbuild init repo DIR` writes: a new recipes
// repository's recipes/, suites.yaml, KEYS.md, keys/, .gitignore and the
// pr, publish and promote workflows, which call kbuild's reusable
// workflows (and through them its action) at a ref. The files beside this
// one are the template, byte for byte but for {{REF}}.
package initrepo

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

//go:embed KEYS.md suites.yaml .gitignore all:.github all:keys all:recipes
var template embed.FS

// Write writes the template into dir with {{REF}} replaced by ref (the
// ref of kbuild's reusable workflows), refusing to overwrite any file, and
// returns the files written (slash-separated, sorted).
func Write(dir, ref string) ([]string, error) {
	var files []string
	err := fs.WalkDir(template, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); err == nil {
			return fmt.Errorf("%s already exists; init repo writes a new repository and overwrites nothing", filepath.Join(dir, filepath.FromSlash(p)))
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, rel := range files {
		data, err := template.ReadFile(rel)
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst, []byte(strings.ReplaceAll(string(data), "{{REF}}", ref)), 0o644); err != nil {
			return nil, err
		}
	}
	return files, nil
}
