package main

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// repoTemplate is what `kbuild init repo DIR` writes: recipes/, suites.yaml,
// KEYS.md, .gitignore and the pr, publish and promote workflows, which call
// kbuild's reusable workflows (and through them its action) at {{REF}}.
//
//go:embed all:initrepo
var repoTemplate embed.FS

// actionRef is the ref of kbuild's reusable workflows the written workflows call: this
// kbuild's release, or main for a build from a checkout.
func actionRef() string {
	if v := thisKbuild().Release; strings.HasPrefix(v, "v") {
		return v
	}
	return "main"
}

// initRepo writes the repository template into dir, refusing to overwrite
// any file, and returns the files written (slash-separated, sorted).
func initRepo(dir, ref string) ([]string, error) {
	var files []string
	err := fs.WalkDir(repoTemplate, "initrepo", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(p, "initrepo/")
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel))); err == nil {
			return fmt.Errorf("%s already exists; init repo writes a new repository and overwrites nothing", filepath.Join(dir, filepath.FromSlash(rel)))
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, rel := range files {
		data, err := repoTemplate.ReadFile(path.Join("initrepo", rel))
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
