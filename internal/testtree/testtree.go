// Package testtree reads a directory tree into memory for tests that
// compare what two runs wrote. It is for tests only.
package testtree

import (
	"os"
	"path/filepath"
	"testing"
)

// Read returns the content of every regular file under dir, by slash
// path relative to dir.
func Read(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
