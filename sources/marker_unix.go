//go:build unix

package sources

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// markExtracting creates the marker path, locked, holding the time the
// extraction started, and returns what removes it. A marker another
// process holds (the same archive extracted at the same time) is left to
// it. Failing to make a marker only loses the record of a kill.
func markExtracting(path string) (done func()) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return func() {}
	}
	m, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(m.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		m.Close()
		return func() {}
	}
	// Written after the lock is held: an empty marker is one being made.
	m.Truncate(0)
	m.WriteAt([]byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0)
	return func() {
		os.Remove(path)
		m.Close()
	}
}

// deadMarker reports whether path is the marker of an extraction that
// died: it holds a start time and no process holds its lock. It returns
// the start time.
func deadMarker(path string) (string, bool) {
	m, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", false
	}
	defer m.Close()
	if err := syscall.Flock(int(m.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return "", false // being extracted now
	}
	b := make([]byte, 64)
	n, _ := m.ReadAt(b, 0)
	since := strings.TrimSpace(string(b[:n]))
	return since, since != ""
}
