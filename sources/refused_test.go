package sources

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"kbuild.dev/kbuild/recipe"
)

// TestRefusalRemembered: an archive refused as unsafe is removed from the
// cache and its refusal remembered: a re-run refuses it with the same
// class of error without downloading or extracting it again; raising a
// limit judges it afresh.
func TestRefusalRemembered(t *testing.T) {
	archive := gzipped(t, tarball(t, file("../escape", "x")))
	var gets atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		w.Write(archive)
	}))
	defer srv.Close()
	src := recipe.Source{URL: srv.URL + "/bad.tar.gz", SHA256: sha(archive)}
	cacheDir := t.TempDir()
	for run := 1; run <= 2; run++ {
		f := withCache(t, cacheDir)
		_, err := f.Fetch(context.Background(), "r", t.TempDir(), "up", src, PluginInfo{})
		if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "leaves the extraction directory") {
			t.Fatalf("run %d: Fetch(archive with ../escape) = %v, want ErrUnsafe", run, err)
		}
		assertNotCached(t, f, sha(archive))
		if run == 2 && (!errors.Is(err, ErrRefusedBefore) || !strings.Contains(err.Error(), "refused before")) {
			t.Fatalf("run 2: Fetch = %v, want the remembered refusal", err)
		}
	}
	if n := gets.Load(); n != 1 {
		t.Fatalf("the archive was downloaded %d times, want once", n)
	}
	// Other limits judge it again (and refuse it again).
	_, err := withCache(t, cacheDir, withMaxExtract(3<<30)).Fetch(context.Background(), "r", t.TempDir(), "up", src, PluginInfo{})
	if !errors.Is(err, ErrUnsafe) || errors.Is(err, ErrRefusedBefore) || gets.Load() != 2 {
		t.Fatalf("with another limit: Fetch = %v after %d downloads, want a fresh refusal after 2", err, gets.Load())
	}
}
