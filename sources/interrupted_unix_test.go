//go:build unix

package sources

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"kbuild.dev/kbuild/recipe"
)

// killChildEnv holds "CACHE|SHA256|OUT" for the child that the test kills
// while it extracts.
const killChildEnv = "KBUILD_SOURCES_KILLED_EXTRACTION"

// TestKilledExtractionRemembered: an extraction SIGKILLed half-way (as the
// OOM killer or a CI deadline does) is not extracted again by the next
// run, which refuses the archive at once as a remembered refusal, removes
// it from the cache and says how to judge it again; an extraction that
// another process is running is not taken for a dead one. Before, every
// re-run extracted the archive again, to be killed again.
func TestKilledExtractionRemembered(t *testing.T) {
	if env := os.Getenv(killChildEnv); env != "" {
		parts := strings.Split(env, "|")
		src := recipe.Source{URL: "http://127.0.0.1:1/many.tar.gz", SHA256: parts[1]}
		_, err := withCache(t, parts[0]).Fetch(context.Background(), "r", parts[2], "up", src, PluginInfo{})
		t.Fatalf("the child finished extracting before it was killed (%v)", err)
	}
	// 60,000 empty files: seconds of file creation, a small archive.
	var tb bytes.Buffer
	zw := gzip.NewWriter(&tb)
	tw := tar.NewWriter(zw)
	for i := range 60_000 {
		tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("d%02d/f%05d", i%60, i), Mode: 0o644, Typeflag: tar.TypeReg})
	}
	tw.Close()
	zw.Close()
	archive := filepath.Join(t.TempDir(), "many.tar.gz")
	if err := os.WriteFile(archive, tb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	f := withCache(t, cacheDir)
	digest, err := f.Add(context.Background(), archive)
	if err != nil {
		t.Fatal(err)
	}
	src := recipe.Source{URL: "http://127.0.0.1:1/many.tar.gz", SHA256: digest}

	// While a live process holds the marker, it is not a dead extraction.
	live := markExtracting(f.markerPath(digest, extractOptions{}))
	if _, dead := deadMarker(f.markerPath(digest, extractOptions{})); dead {
		t.Fatal("a marker held by this process is taken for a dead extraction")
	}
	live()

	out := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledExtractionRemembered$")
	cmd.Env = append(os.Environ(), killChildEnv+"="+cacheDir+"|"+digest+"|"+out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once it has extracted something.
	marker := f.markerPath(digest, extractOptions{})
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(marker)
		if len(b) > 0 && filesUnder(out) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child never started extracting")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	if err := cmd.Wait(); err == nil {
		t.Fatal("the child finished before it was killed")
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the killed extraction left no marker: %v", err)
	}

	for run := 1; run <= 2; run++ {
		again := t.TempDir()
		_, err := withCache(t, cacheDir).Fetch(context.Background(), "r", again, "up", src, PluginInfo{})
		if !errors.Is(err, ErrRefusedBefore) || !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "was killed before it finished") || !strings.Contains(err.Error(), "delete it to judge the archive again") {
			t.Fatalf("run %d after the kill: Fetch = %v, want the killed extraction refused as remembered (ErrRefusedBefore, ErrTooLarge)", run, err)
		}
		if n := filesUnder(again); n > 0 {
			t.Fatalf("run %d after the kill extracted the archive again (%d files)", run, n)
		}
		assertNotCached(t, f, digest)
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("run %d: the dead marker is still there", run)
		}
	}
}

// filesUnder counts the regular files under dir.
func filesUnder(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}
