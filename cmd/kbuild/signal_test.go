package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFetchStopsOnSIGTERM: a kbuild fetch process that gets SIGTERM while
// it extracts a large url archive stops, exits with an error, and leaves
// nothing in its TMPDIR (the extraction directory is removed).
func TestFetchStopsOnSIGTERM(t *testing.T) {
	archive := manyFiles(t, 60_000)
	sum := sha256.Sum256(archive)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "src.tar.gz", time.Unix(1700000000, 0), bytes.NewReader(archive))
	}))
	defer srv.Close()
	dir := oneSourceRecipe(t, "many", "url: "+srv.URL+"/src.tar.gz\n      sha256: sha256:"+hex.EncodeToString(sum[:]))
	tmp := t.TempDir()
	cmd := exec.Command(kbuildBin, "fetch", "--cache-dir", t.TempDir(), dir)
	cmd.Env = append(os.Environ(), "CI=true", "TMPDIR="+tmp)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Wait until extraction has written files, or the process has ended.
	var err error
	extracting := false
	for !extracting {
		select {
		case err = <-done:
			t.Fatalf("kbuild fetch ended (%v) before it was seen extracting\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
		default:
		}
		extracting = countFiles(tmp) > 100
		if !extracting {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = <-done
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() <= 0 {
		t.Fatalf("kbuild fetch after SIGTERM: %v, want an exit with an error code\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	if !strings.Contains(stderr.String(), "context canceled") && !strings.Contains(stderr.String(), "stopped") {
		t.Errorf("stderr does not say the fetch was stopped:\n%s", &stderr)
	}
	left, _ := os.ReadDir(tmp)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if len(names) > 0 {
		t.Errorf("kbuild fetch left %d files (%d in all) in TMPDIR after SIGTERM: %s", len(names), countFiles(tmp), strings.Join(names, ", "))
	}
}

// manyFiles is a tar.gz of n small files in directories of 1000.
func manyFiles(t *testing.T, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	body := []byte(strings.Repeat("kbuild\n", 10))
	for i := range n {
		hdr := &tar.Header{Name: fmt.Sprintf("src/d%03d/f%05d.txt", i/1000, i), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body)), ModTime: time.Unix(1700000000, 0), Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// countFiles counts the regular files below dir.
func countFiles(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}
