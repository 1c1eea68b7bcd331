package siteread

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/trust"
)

func TestStateFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), ".kbuild-state.json")
	if s, err := ReadState(file); s != nil || err != nil {
		t.Fatalf("ReadState of no file = %v, %v; want nil, nil (nothing accepted yet)", s, err)
	}
	want := trust.State{Generated: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), RootVersion: 2, RootDigest: "sha256:" + strings.Repeat("a", 64)}
	if err := WriteState(file, &want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadState(file)
	if err != nil || got == nil || *got != want {
		t.Fatalf("ReadState after WriteState = %+v, %v; want %+v", got, err, want)
	}
	for _, tc := range []struct{ name, content, wantErr string }{
		{"broken", "{", file + ": state file: "},
		{"root version without digest", `{"generated":"2026-11-01T00:00:00Z","rootVersion":2}`, file + ": state file: rootVersion and rootDigest must be set together"},
		{"huge", strings.Repeat(" ", maxStateFile+1), "larger than"},
	} {
		if err := os.WriteFile(file, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadState(file); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: ReadState = %v, want an error containing %q", tc.name, err, tc.wantErr)
		}
	}
}
