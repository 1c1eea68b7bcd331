package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/internal/stacktest"
	"kbuild.dev/kbuild/internal/testenv"
)

// TestHelmRepoAddExplained: the catalog and README say that `helm repo
// add` against the site fails with `unknown field "expires"` (the site is
// a signed kubepkg index; Helm installs from the oci:// references): the
// real Helm 3 and Helm 4 do fail so, against a served site, so the
// explanation the pages give is the error their readers see.
func TestHelmRepoAddExplained(t *testing.T) {
	const quoted = `unknown field "expires"`
	for _, f := range []string{"site/assets/index.html", "site/assets/layout.html", "README.md"} {
		if page := readFile(t, filepath.Join(repoRoot, f)); !strings.Contains(page, "helm repo add") || !strings.Contains(strings.ReplaceAll(page, "&#34;", `"`), quoted) {
			t.Errorf("%s does not explain that helm repo add fails with %s", f, quoted)
		}
	}
	dir := t.TempDir()
	key := keygen(t, dir, "index")
	site := filepath.Join(dir, "site")
	if r := repoIndex(t, stacktest.Dist(), site, "--sign-key", key+".key"); r.code != 0 {
		t.Fatal(r)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(site)))
	defer srv.Close()
	for _, h := range []string{"helm", "helm4"} {
		t.Run(h, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			home := t.TempDir()
			cmd := exec.CommandContext(ctx, testenv.Tool(t, h), "repo", "add", "site", srv.URL)
			cmd.Env = append(os.Environ(), "HOME="+home, "HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), quoted) {
				t.Errorf("%s repo add %s: %v\n%s\nwant the failure the catalog explains (%s)", h, srv.URL, err, out, quoted)
			}
		})
	}
}
