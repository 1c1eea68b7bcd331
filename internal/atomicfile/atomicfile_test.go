package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// leftovers lists the files in dir other than want.
func leftovers(t *testing.T, dir string, want ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for _, e := range ents {
		keep := false
		for _, w := range want {
			keep = keep || e.Name() == w
		}
		if !keep {
			extra = append(extra, e.Name())
		}
	}
	return extra
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "index.yaml")
	for _, tc := range []struct {
		data string
		perm fs.FileMode
	}{{"first\n", 0o644}, {"second, replacing\n", 0o600}} {
		if err := WriteFile(p, []byte(tc.data), tc.perm); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != tc.data {
			t.Fatalf("ReadFile = %q, %v, want %q", got, err, tc.data)
		}
		st, _ := os.Stat(p)
		if st.Mode().Perm() != tc.perm {
			t.Errorf("mode = %v, want %v", st.Mode().Perm(), tc.perm)
		}
	}
	if extra := leftovers(t, filepath.Dir(p), "index.yaml"); extra != nil {
		t.Errorf("left behind: %v", extra)
	}
}

// TestFailedWriteKeepsOld fails a write at each step and checks that the
// old file is untouched and no temporary file remains.
func TestFailedWriteKeepsOld(t *testing.T) {
	const old = "old content\n"
	for _, tc := range []struct {
		name string
		fail func(t *testing.T, path string) error
	}{
		{"the source fails mid-stream", func(t *testing.T, path string) error {
			f, err := Create(path, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Abort()
			_, err = io.Copy(f, io.MultiReader(strings.NewReader("half of the new "), failingReader{}))
			return err
		}},
		{"the disk fails under Write", func(t *testing.T, path string) error {
			f, err := Create(path, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Abort()
			f.Write([]byte("half of the new "))
			f.f.Close() // what a failing device looks like to Write and Sync
			if _, err := f.Write([]byte("rest")); err == nil {
				t.Error("Write on a failed file succeeded")
			}
			return f.Commit()
		}},
		{"the rename fails", func(t *testing.T, path string) error {
			f, err := Create(path, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("new"))
			// A non-empty directory where the file should go cannot be renamed over.
			return f.CommitAs(filepath.Join(filepath.Dir(path), "dir"))
		}},
		{"CommitNew over an existing file", func(t *testing.T, path string) error {
			f, err := Create(path, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("new"))
			err = f.CommitNew()
			if !errors.Is(err, fs.ErrExist) {
				t.Errorf("CommitNew = %v, want fs.ErrExist", err)
			}
			return err
		}},
		{"CommitAs outside the directory", func(t *testing.T, path string) error {
			f, err := Create(path, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("new"))
			return f.CommitAs(filepath.Join(t.TempDir(), "elsewhere"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "file")
			if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "dir", "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.fail(t, path); err == nil {
				t.Fatal("the write succeeded; want an error")
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != old {
				t.Errorf("after the failed write the file is %q, %v; want %q", got, err, old)
			}
			if extra := leftovers(t, dir, "file", "dir"); extra != nil {
				t.Errorf("left behind: %v", extra)
			}
		})
	}
}

func TestCommitNewAndDone(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "key")
	f, err := Create(p, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("secret"))
	if err := f.CommitNew(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "secret" {
		t.Errorf("key = %q, want %q", got, "secret")
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", st.Mode().Perm())
	}
	if extra := leftovers(t, dir, "key"); extra != nil {
		t.Errorf("left behind: %v", extra)
	}
	if err := f.Commit(); !errors.Is(err, ErrDone) {
		t.Errorf("second Commit = %v, want ErrDone", err)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, ErrDone) {
		t.Errorf("Write after Commit = %v, want ErrDone", err)
	}
	f.Abort() // does nothing after Commit
	if _, err := os.Stat(p); err != nil {
		t.Errorf("Abort after Commit removed the file: %v", err)
	}
}

// TestSyncBeforeCommit checks that Sync leaves the file where it is, not
// yet at the path, and that Commit after it puts all of it there; after
// Commit, Sync is ErrDone.
func TestSyncBeforeCommit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "index.yaml")
	f, err := Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("first half, "))
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after Sync the path exists (%v); it must wait for Commit", err)
	}
	f.Write([]byte("second half\n"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "first half, second half\n" {
		t.Errorf("committed %q", got)
	}
	if err := f.Sync(); !errors.Is(err, ErrDone) {
		t.Errorf("Sync after Commit = %v, want ErrDone", err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// BenchmarkWriteFile writes a 4 KiB file in place of another, as a site's
// pages are rewritten.
func BenchmarkWriteFile(b *testing.B) {
	dir := b.TempDir()
	data := make([]byte, 4096)
	p := filepath.Join(dir, "page.html")
	for b.Loop() {
		if err := WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
