package testenv

import (
	"bytes"
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
	"sync/atomic"
	"testing"
)

// fetchFixtures runs scripts/fetch-fixtures.sh with the cache dest, the
// mirror url and, when set, the manifest; it returns the exit code and
// the output.
func fetchFixtures(t *testing.T, dest, mirror, manifest string) (int, string, string) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(RepoRoot(), FetchScript))
	cmd.Env = append(os.Environ(), "KBUILD_FIXTURES="+dest, "KBUILD_FIXTURES_MIRROR="+mirror)
	if manifest != "" {
		cmd.Env = append(cmd.Env, "KBUILD_FIXTURES_MANIFEST="+manifest)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// serve serves files on loopback, counting the requests.
func serve(t *testing.T, files map[string][]byte) (string, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		b, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

// TestFetchFixturesScript runs scripts/fetch-fixtures.sh against a
// loopback server: pinned files are fetched and kept, a second run fetches
// nothing, other bytes than the pin are refused and never left in the
// cache (not even a file that was there before), and a file that cannot be
// fetched fails the run.
func TestFetchFixturesScript(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	a, b := []byte("first fixture\n"), []byte("second fixture\n")
	manifest := filepath.Join(t.TempDir(), "fixtures.txt")
	os.WriteFile(manifest, fmt.Appendf(nil, "# pins\n%s a.yaml https://example.invalid/a.yaml\n%s b.yaml https://example.invalid/b.yaml\n", sha256Hex(a), sha256Hex(b)), 0o644)

	t.Run("fetched, then kept", func(t *testing.T) {
		url, requests := serve(t, map[string][]byte{"a.yaml": a, "b.yaml": b})
		dest := t.TempDir()
		if code, out, errOut := fetchFixtures(t, dest, url, manifest); code != 0 {
			t.Fatalf("fetch-fixtures.sh = %d\n%s%s", code, out, errOut)
		}
		for name, want := range map[string][]byte{"a.yaml": a, "b.yaml": b} {
			if got, err := os.ReadFile(filepath.Join(dest, name)); err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s = %q, %v; want %q", name, got, err, want)
			}
		}
		sums, _ := os.ReadFile(filepath.Join(dest, "SHA256SUMS"))
		if want := sha256Hex(a) + "  a.yaml\n" + sha256Hex(b) + "  b.yaml\n"; string(sums) != want {
			t.Errorf("SHA256SUMS = %q, want %q", sums, want)
		}
		before := requests.Load()
		if code, out, errOut := fetchFixtures(t, dest, url, manifest); code != 0 || requests.Load() != before || !strings.Contains(out, "a.yaml: in the cache") {
			t.Errorf("second run = %d after %d more requests, want 0 after none\n%s%s", code, requests.Load()-before, out, errOut)
		}
	})

	t.Run("other bytes refused", func(t *testing.T) {
		url, _ := serve(t, map[string][]byte{"a.yaml": []byte("tampered\n"), "b.yaml": b})
		dest := t.TempDir()
		os.WriteFile(filepath.Join(dest, "a.yaml"), []byte("left by hand\n"), 0o644)
		code, _, errOut := fetchFixtures(t, dest, url, manifest)
		if code == 0 || !strings.Contains(errOut, "a.yaml: refused: "+url+"/a.yaml has sha256 "+sha256Hex([]byte("tampered\n"))) {
			t.Fatalf("fetch-fixtures.sh of a tampered file = %d, want a refusal naming the file and both digests\n%s", code, errOut)
		}
		if _, err := os.Stat(filepath.Join(dest, "a.yaml")); !os.IsNotExist(err) {
			t.Errorf("a.yaml is in the cache after a refusal: %v", err)
		}
		if got, _ := os.ReadFile(filepath.Join(dest, "b.yaml")); !bytes.Equal(got, b) {
			t.Errorf("b.yaml = %q, want it fetched beside the refusal", got)
		}
		if entries, _ := filepath.Glob(filepath.Join(dest, ".*.yaml.*")); len(entries) > 0 {
			t.Errorf("temporary files left: %v", entries)
		}
	})

	t.Run("unreachable", func(t *testing.T) {
		url, _ := serve(t, map[string][]byte{"a.yaml": a})
		dest := t.TempDir()
		code, _, errOut := fetchFixtures(t, dest, url, manifest)
		if code == 0 || !strings.Contains(errOut, "could not fetch (no network?): b.yaml") {
			t.Fatalf("fetch-fixtures.sh with b.yaml unreachable = %d, want a failure naming it\n%s", code, errOut)
		}
	})
}

// TestFetchFixturesPins serves a copy of the real upstream fixtures on
// loopback and fetches them with the repository's own pins
// (scripts/fixtures.txt): what the script puts in its cache is what
// Upstream accepts.
func TestFetchFixturesPins(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	pins := upstreamPins(t)
	var names []string
	for name := range pins {
		names = append(names, name)
	}
	src := Upstream(t, names...)
	files := map[string][]byte{}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	url, _ := serve(t, files)
	dest := t.TempDir()
	if code, out, errOut := fetchFixtures(t, dest, url, ""); code != 0 {
		t.Fatalf("fetch-fixtures.sh = %d\n%s%s", code, out, errOut)
	}
	t.Setenv("KBUILD_FIXTURES", dest)
	if got := Upstream(t, names...); got != dest {
		t.Errorf("Upstream() = %s, want %s", got, dest)
	}
}
