package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrDone is returned by a File's methods once Commit or Abort has run.
var ErrDone = errors.New("atomicfile: file already committed or aborted")

// File is a file being written in place of a path. Write to it, then call
// Commit to put it at the path or Abort to remove it; deferring Abort right
// after Create is safe, as Abort after Commit does nothing.
type File struct {
	f    *os.File
	path string
	perm fs.FileMode
	done bool
}

// Create starts writing the file that Commit will put at path with the
// permissions perm. It creates path's directory (mode 0755) when it does
// not exist, and a temporary file in it named after path, ".NAME.tmp-*".
func Create(path string, perm fs.FileMode) (*File, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &File{f: f, path: path, perm: perm}, nil
}

// Write writes p to the temporary file.
func (f *File) Write(p []byte) (int, error) {
	if f.done {
		return 0, ErrDone
	}
	return f.f.Write(p)
}

// Name is the temporary file's path, to read back what was written before
// it is committed.
func (f *File) Name() string { return f.f.Name() }

// Sync makes what was written so far durable now, as Commit does first:
// a Commit after it waits only for what was written since. Call it to
// have the disk work while the caller does something else.
func (f *File) Sync() error {
	if f.done {
		return ErrDone
	}
	if err := f.f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

// Commit syncs the file, gives it its permissions and renames it over the
// path given to Create, then syncs the directory. On an error before the
// rename the temporary file is removed and the path is left as it was; an
// error syncing the directory comes after the rename, with the new file in
// place.
func (f *File) Commit() error { return f.commit(f.path, false) }

// CommitAs is Commit to another path in the same directory, for a file
// whose name is known only once it is written (a content-addressed blob
// named after its digest).
func (f *File) CommitAs(path string) error {
	if filepath.Dir(path) != filepath.Dir(f.path) {
		f.Abort()
		return fmt.Errorf("atomicfile: %s is not in the directory of %s, where the temporary file is", path, f.path)
	}
	return f.commit(path, false)
}

// CommitNew is Commit that refuses to replace a file: if the path exists
// (or appears meanwhile), it fails with an error wrapping fs.ErrExist and
// leaves the file there alone. It links the temporary file to the path,
// so the file system must support hard links.
func (f *File) CommitNew() error { return f.commit(f.path, true) }

func (f *File) commit(path string, noReplace bool) error {
	if f.done {
		return ErrDone
	}
	tmp := f.f.Name()
	err := f.f.Sync()
	if err == nil {
		err = f.f.Chmod(f.perm)
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if noReplace {
			err = os.Link(tmp, path)
			if errors.Is(err, fs.ErrExist) {
				err = existsError(path)
			}
		} else {
			err = os.Rename(tmp, path)
		}
	}
	f.done = true
	if noReplace || err != nil {
		// After a link the temporary name goes; after a failure, the file.
		os.Remove(tmp)
	}
	var exists existsError
	if errors.As(err, &exists) {
		return err
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// Abort closes and removes the temporary file, leaving the path as it
// was. It does nothing after Commit or an earlier Abort.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.f.Close()
	os.Remove(f.f.Name())
}

// WriteFile writes data to path atomically with the permissions perm,
// creating path's directory when needed: Create, Write, Commit.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// existsError is CommitNew's refusal; it matches fs.ErrExist.
type existsError string

func (e existsError) Error() string {
	return string(e) + " exists; refusing to overwrite it"
}

func (e existsError) Is(target error) bool { return target == fs.ErrExist }

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
