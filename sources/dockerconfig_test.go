package sources

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

// TestConfigKeychain reads credentials from a Docker config file, as
// kubepkg's --registry-config does: a registry listed there gets its
// credentials, Docker Hub its index.docker.io entry, others none.
func TestConfigKeychain(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.json")
	auth := func(u, p string) string { return base64.StdEncoding.EncodeToString([]byte(u + ":" + p)) }
	os.WriteFile(cfg, []byte(`{"auths": {"ghcr.io": {"auth": "`+auth("bot", "s3cret")+`"}, "https://index.docker.io/v1/": {"auth": "`+auth("hub", "pw")+`"}}}`), 0o600)
	kc, err := ConfigKeychain(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ repo, user, pass string }{
		{"ghcr.io/example/charts", "bot", "s3cret"},
		{"docker.io/library/redis", "hub", "pw"},
		{"quay.io/other/repo", "", ""},
	} {
		repo, err := name.NewRepository(tc.repo)
		if err != nil {
			t.Fatal(err)
		}
		a, err := kc.Resolve(repo)
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.Authorization()
		if err != nil {
			t.Fatal(err)
		}
		if got.Username != tc.user || got.Password != tc.pass || tc.user == "" && a != authn.Anonymous {
			t.Errorf("%s: credentials %q/%q, want %q/%q", tc.repo, got.Username, got.Password, tc.user, tc.pass)
		}
	}
	if _, err := ConfigKeychain(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
}
