package builder

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLoadRefusesNonRegular: recipe.yaml must be a regular file of bounded
// size; /dev/zero behind a symlink, a FIFO (which would block the open) and
// a directory are refused with a message naming the file.
func TestLoadRefusesNonRegular(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, file string)
		want string
	}{
		{"symlink to /dev/zero", func(t *testing.T, file string) {
			if err := os.Symlink("/dev/zero", file); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"fifo", func(t *testing.T, file string) {
			if err := syscall.Mkfifo(file, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}, "not a regular file"},
		{"directory", func(t *testing.T, file string) {
			if err := os.Mkdir(file, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"too large", func(t *testing.T, file string) {
			if err := os.WriteFile(file, []byte(strings.Repeat("#\n", maxRecipeSize)), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "over the 4194304-byte limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, RecipeFile)
			tc.make(t, file)
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), file) {
				t.Fatalf("Load = %v, want an error naming %s containing %q", err, file, tc.want)
			}
		})
	}
}
