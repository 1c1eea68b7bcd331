package builder

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// chartTree is an assembled chart in memory: its files and directories by
// slash-separated path relative to the chart root. Charts are assembled
// and packed from memory; only a chart that an overlay, remove or a step
// plugin changes is written to its work directory first.
type chartTree map[string]*treeFile

// treeFile is a file (or, with dir, a directory) of a chartTree. mode
// holds the permission bits a copy on disk gets.
type treeFile struct {
	data []byte
	mode fs.FileMode
	dir  bool
}

// readTree reads the regular files and directories of src. Anything else
// (a symlink, a device) is refused: charts carry plain files only.
func readTree(src string) (chartTree, error) {
	t := chartTree{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
			return nil
		case d.IsDir():
			t[rel] = &treeFile{dir: true, mode: 0o755}
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file; charts carry plain files only", rel)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		t[rel] = &treeFile{data: data, mode: fi.Mode().Perm() | 0o600}
		return nil
	})
	return t, err
}

// filesTree makes a tree of files written 0644 (patches.WrapFiles').
func filesTree(files map[string][]byte) chartTree {
	t := chartTree{}
	for name, data := range files {
		t[name] = &treeFile{data: data, mode: 0o644}
	}
	return t
}

// write creates the tree under dst (directories 0755, files with their
// mode), as assembling on disk used to.
func (t chartTree) write(dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, rel := range slices.Sorted(maps.Keys(t)) {
		f, p := t[rel], filepath.Join(dst, filepath.FromSlash(rel))
		if f.dir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.data, f.mode); err != nil {
			return err
		}
	}
	return nil
}

// ignored reports whether .helmignore's rules leave rel out of the
// archive: rel itself, or a directory above it, as walking the chart on
// disk (Pack) skips an ignored directory with everything in it.
func ignored(rules interface {
	Ignore(string, os.FileInfo) bool
}, rel string) bool {
	for i := strings.IndexByte(rel, '/'); i >= 0; i = next(rel, i) {
		if rules.Ignore(rel[:i], treeInfo{name: path.Base(rel[:i]), dir: true}) {
			return true
		}
	}
	return rules.Ignore(rel, treeInfo{name: path.Base(rel)})
}

// next returns the index of the slash after the one at i, or -1.
func next(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// treeInfo is the os.FileInfo .helmignore rules see for a path of a
// chartTree (they look at IsDir only).
type treeInfo struct {
	name string
	dir  bool
}

func (i treeInfo) Name() string { return i.name }
func (i treeInfo) Size() int64  { return 0 }
func (i treeInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i treeInfo) ModTime() time.Time { return time.Time{} }
func (i treeInfo) IsDir() bool        { return i.dir }
func (i treeInfo) Sys() any           { return nil }
