package siteread

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFileAnonBuffer: a large local file is read into private
// anonymous memory (its size reserved once, outside the Go heap), which a
// later write to the file does not change, and Release unmaps it.
func TestReadFileAnonBuffer(t *testing.T) {
	defer func(n int64) { mapMinSize = n }(mapMinSize)
	mapMinSize = 1 << 12
	path := filepath.Join(t.TempDir(), "index.yaml")
	if err := os.WriteFile(path, []byte(strings.Repeat("a", 1<<16)), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if kind, _ := mapped.Load(&b[0]); kind != anonMapping {
		t.Fatalf("ReadFile of a large file: mapping %v, want %s", kind, anonMapping)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("b", 1<<16)), 0o644); err != nil {
		t.Fatal(err)
	}
	if len(b) != 1<<16 || strings.Count(string(b), "a") != 1<<16 {
		t.Fatal("the bytes ReadFile returned changed when the file was written")
	}
	Release(b)
	if _, ok := mapped.Load(&b[0]); ok {
		t.Fatal("Release left the buffer recorded")
	}
}
