package dist

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// job is one record to read, with its signature sidecar ("" for none).
type job struct{ record, sidecar string }

// walkBatch is how many directory entries walk reads at a time: the
// workers start on the first records while the rest of a directory of
// 100,000 is still being listed.
const walkBatch = 1024

// walk sends every file under dir that may be a build record (.yaml or
// .yml, not a BuildInfo (.build.yaml) nor a signature sidecar) to jobs as
// the directories are read: dir/oci and hidden directories are skipped,
// and symbolic links are not followed into directories. A directory is
// listed in the order the file system keeps it, not sorted (the Builder
// sorts what it writes, and errors are sorted). A record whose
// sidecar is listed before it is sent with the sidecar; one whose sidecar
// comes after it is sent again with the sidecar, whose signatures the
// Builder then merges into the version added the first time. A dir that
// is a file is a record itself.
func walk(ctx context.Context, dir string, jobs chan<- job) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		if isRecordName(filepath.Base(dir)) {
			jobs <- job{record: dir}
		}
		return nil
	}
	root := filepath.Clean(dir)
	pending := []string{dir}
	for len(pending) > 0 {
		d := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		subdirs, err := walkDir(ctx, d, jobs)
		if err != nil {
			return err
		}
		// Depth first, in lexical order: the last pushed is read first.
		slices.SortFunc(subdirs, func(a, b string) int { return strings.Compare(b, a) })
		for _, s := range subdirs {
			if filepath.Base(s) == "oci" && filepath.Dir(s) == root {
				continue
			}
			pending = append(pending, s)
		}
	}
	return nil
}

// walkDir lists the directory d, sending its records to jobs, and returns
// its subdirectories that are not hidden.
func walkDir(ctx context.Context, d string, jobs chan<- job) ([]string, error) {
	f, err := os.Open(d)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l := newLister(d, jobs)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ents, err := f.ReadDir(walkBatch)
		for _, e := range ents {
			l.entry(e.Name(), e.IsDir())
		}
		if errors.Is(err, io.EOF) {
			return l.subdirs, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// lister pairs the records of one directory with their sidecars, in
// whatever order the entries come.
type lister struct {
	dir      string
	jobs     chan<- job
	sidecars map[string]bool // sidecars listed so far, by name
	alone    map[string]bool // records sent without a sidecar, by name
	subdirs  []string
}

func newLister(dir string, jobs chan<- job) *lister {
	return &lister{dir: dir, jobs: jobs, sidecars: map[string]bool{}, alone: map[string]bool{}}
}

// entry takes the next entry of the directory.
func (l *lister) entry(name string, isDir bool) {
	switch {
	case isDir:
		if !strings.HasPrefix(name, ".") {
			l.subdirs = append(l.subdirs, filepath.Join(l.dir, name))
		}
	case strings.HasSuffix(name, SigSuffix):
		l.sidecars[name] = true
		base := strings.TrimSuffix(name, SigSuffix)
		for _, r := range []string{base + ".yaml", base + ".yml"} {
			if l.alone[r] {
				delete(l.alone, r)
				l.jobs <- job{record: filepath.Join(l.dir, r), sidecar: filepath.Join(l.dir, name)}
			}
		}
	case isRecordName(name):
		j := job{record: filepath.Join(l.dir, name)}
		if sc := SidecarPath(name); l.sidecars[sc] {
			j.sidecar = filepath.Join(l.dir, sc)
		} else {
			l.alone[name] = true
		}
		l.jobs <- j
	}
}

// isRecordName reports whether a file of that name may hold a build
// record.
func isRecordName(name string) bool {
	return (strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) &&
		!strings.HasSuffix(name, SigSuffix) && !strings.HasSuffix(name, ".build.yaml")
}
