// Package stacktest gives tests the build records of a Foreman stack
// (foreman, pulp, candlepin, smart-proxy and foreman-stack release sets),
// shaped as kbuild writes them, with the upstream image digests the
// Foreman recipes pin (read from quay.io). It is for tests only.
package stacktest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/dist"
)

// Generated is the generated time of the indexes Index returns.
var Generated = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// Dist returns the directory of every build record.
func Dist() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "dist")
}

// CopyDist copies the records named (as "foreman-3.15.0-1") into a new
// directory and returns it.
func CopyDist(t testing.TB, records ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, r := range records {
		b, err := os.ReadFile(filepath.Join(Dist(), r+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, r+".yaml"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Index returns the index of the records named (all when none are).
func Index(t testing.TB, records ...string) *index.RepositoryIndex {
	t.Helper()
	dir := Dist()
	if len(records) > 0 {
		dir = CopyDist(t, records...)
	}
	b := index.NewBuilder()
	if err := dist.Add(context.Background(), b, dir); err != nil {
		t.Fatal(err)
	}
	x, err := b.Index(Generated)
	if err != nil {
		t.Fatal(err)
	}
	return x
}
