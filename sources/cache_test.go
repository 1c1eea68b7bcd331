package sources

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"kbuild.dev/kbuild/recipe"
)

var timeAgo = time.Unix(1000000000, 0)

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }

// helperEnv switches the test binary into a helper process that fetches
// sources (see TestMain).
const helperEnv = "KBUILD_SOURCES_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "fetch" {
		os.Exit(helperFetch())
	}
	os.Exit(m.Run())
}

// helperFetch fetches the sources in $KBUILD_HELPER_SOURCES (JSON, name to
// source) into the cache $KBUILD_HELPER_CACHE, in reverse name order when
// $KBUILD_HELPER_REVERSE is set, and prints "name digest" lines.
func helperFetch() int {
	var srcs map[string]recipe.Source
	if err := json.Unmarshal([]byte(os.Getenv("KBUILD_HELPER_SOURCES")), &srcs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	f, err := New(WithCacheDir(os.Getenv("KBUILD_HELPER_CACHE")), WithKeychain(noCreds{}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	names := make([]string, 0, len(srcs))
	for n := range srcs {
		names = append(names, n)
	}
	sort.Strings(names)
	if os.Getenv("KBUILD_HELPER_REVERSE") != "" {
		sort.Sort(sort.Reverse(sort.StringSlice(names)))
	}
	work, _ := os.MkdirTemp("", "kbuild-helper-")
	defer os.RemoveAll(work)
	for _, n := range names {
		res, err := f.Fetch(context.Background(), ".", work, n, srcs[n], PluginInfo{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("%s %s\n", n, res.Resolved.Digest)
	}
	return 0
}

// slowFiles serves bodies in small flushed pieces, so that two clients
// downloading at once interleave.
func slowFiles(m map[string][]byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := m[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		for len(b) > 0 {
			n := min(len(b), 64<<10)
			w.Write(b[:n])
			w.(http.Flusher).Flush()
			b = b[n:]
			time.Sleep(time.Millisecond)
		}
	})
}

// TestConcurrentProcesses runs two processes fetching the same sources
// into one cache at the same time, twice: both succeed with the same
// digests, every cache entry is intact, no temporary file is left, and
// the second round makes no request at all.
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	rng := rand.New(rand.NewSource(1))
	bodies := map[string][]byte{}
	for i := range 6 {
		b := make([]byte, (1+i%3)<<20)
		rng.Read(b)
		bodies[fmt.Sprintf("/f%d.bin", i)] = b
	}
	chart := chartArchive(t, "app", "1.0.0")
	bodies["/charts/index.yaml"] = repoIndex("app", "1.0.0", "app-1.0.0.tgz", sha(chart))
	bodies["/charts/app-1.0.0.tgz"] = chart
	srv, count := serve(t, slowFiles(bodies)) // bodies is read-only from here on
	srcs := map[string]recipe.Source{}
	for i := range 6 {
		p := fmt.Sprintf("/f%d.bin", i)
		srcs[fmt.Sprintf("file%d", i)] = recipe.Source{URL: srv.URL + p, SHA256: sha(bodies[p])}
	}
	srcs["chart"] = recipe.Source{Chart: &recipe.ChartSource{Repository: srv.URL + "/charts", Name: "app", Version: "1.0.0", Digest: sha(chart)}}
	spec, _ := json.Marshal(srcs)
	cacheDir := t.TempDir()

	round := func() []string {
		var wg sync.WaitGroup
		outs := make([]string, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), helperEnv+"=fetch", "KBUILD_HELPER_CACHE="+cacheDir, "KBUILD_HELPER_SOURCES="+string(spec))
				if i == 1 {
					cmd.Env = append(cmd.Env, "KBUILD_HELPER_REVERSE=1")
				}
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Errorf("process %d: %v\n%s", i, err, stderr.String())
				}
				lines := strings.Split(strings.TrimSpace(string(out)), "\n")
				sort.Strings(lines)
				outs[i] = strings.Join(lines, "\n")
			}()
		}
		wg.Wait()
		if outs[0] != outs[1] {
			t.Errorf("the processes disagree:\n%s\n---\n%s", outs[0], outs[1])
		}
		return strings.Split(outs[0], "\n")
	}

	lines := round()
	if len(lines) != len(srcs) {
		t.Fatalf("got %d results, want %d: %v", len(lines), len(srcs), lines)
	}
	for _, l := range lines {
		n, d, _ := strings.Cut(l, " ")
		if want := srcs[n].SHA256; srcs[n].Chart == nil && d != want {
			t.Errorf("%s: digest %s, want %s", n, d, want)
		}
	}
	checkCache(t, cacheDir)
	count.reset()
	round()
	if n := count.reset(); n != 0 {
		t.Errorf("second round made %d requests", n)
	}
	checkCache(t, cacheDir)
}

// checkCache verifies every blob against its name and that no temporary
// file remains.
func checkCache(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(d.Name(), ".") && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left in the cache: %s", p)
		}
		if d.Type().IsRegular() && filepath.Base(filepath.Dir(p)) == "sha256" {
			f, _ := os.Open(p)
			got, _, _ := hashReader(f)
			f.Close()
			if got != "sha256:"+d.Name() {
				t.Errorf("cache entry %s holds content %s", p, got)
			}
		}
		return nil
	})
}

func TestCachePutConcurrent(t *testing.T) {
	c := &cache{dir: t.TempDir(), logf: t.Logf}
	data := bytes.Repeat([]byte("kbuild"), 100000)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if d, err := c.put(bytes.NewReader(data), -1, nil); err != nil || d != sha(data) {
				t.Errorf("put = %s, %v", d, err)
			}
		}()
	}
	wg.Wait()
	checkCache(t, c.dir)
	f, err := c.open(sha(data))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b, _ := io.ReadAll(f); !bytes.Equal(b, data) {
		t.Error("open returned other content")
	}
}

func TestLimitReader(t *testing.T) {
	for _, tc := range []struct {
		n, limit int64
		tooLarge bool
	}{{0, 0, false}, {10, 10, false}, {11, 10, true}, {5, 1 << 62, false}, {1 << 20, 1000, true}} {
		got, err := io.ReadAll(&limitReader{r: bytes.NewReader(make([]byte, tc.n)), n: tc.limit})
		if tooLarge := err != nil; tooLarge != tc.tooLarge || (!tooLarge && int64(len(got)) != tc.n) {
			t.Errorf("read %d with limit %d: %d bytes, %v", tc.n, tc.limit, len(got), err)
		}
	}
}
