package dist

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestReadCapped checks the reading of one record file: its bytes into a
// reused buffer, and a clear refusal of what is not a regular file within
// the limit — a FIFO is refused, not waited on.
func TestReadCapped(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "record.yaml"), []byte("kind: PackageSource\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "empty.yaml"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "big.yaml"), make([]byte, 101), 0o644)
	os.Mkdir(filepath.Join(dir, "dir.yaml"), 0o755)
	fifo := runtime.GOOS == "linux"
	if fifo {
		if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		file    string
		want    string
		wantErr string
		notExit bool
	}{
		{file: "record.yaml", want: "kind: PackageSource\n"},
		{file: "empty.yaml", want: ""},
		{file: "big.yaml", wantErr: "big.yaml: 101 bytes, more than the 100 allowed"},
		{file: "missing.yaml", wantErr: "no such file or directory", notExit: true},
		{file: "dir.yaml", wantErr: "dir.yaml: not a regular file"},
		{file: "fifo.yaml", wantErr: "fifo.yaml: not a regular file"},
	} {
		if tc.file == "fifo.yaml" && !fifo {
			continue
		}
		t.Run(tc.file, func(t *testing.T) {
			buf := make([]byte, 0, 4) // grown when short
			got, err := readCapped(filepath.Join(dir, tc.file), 100, buf)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("readCapped = %q, %v; want an error containing %q", got, err, tc.wantErr)
				}
				if tc.notExit && !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("error %v is not fs.ErrNotExist", err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("readCapped = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
