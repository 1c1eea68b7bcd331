package main

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/kubepkgclient"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/internal/upstreamtest"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/trust"
)

// TestBumpIndexClientAgrees: kbuild bump --index compares a bump only
// with a published index a kubepkg subscriber would accept with the same
// public key. Each site is served over HTTP (the index and its
// index.yaml.sig beside it, as kubepkg fetches them) and judged by
// kubepkgclient, the independent encoding of kubepkg's client; bump
// accepts exactly those (and diffs against the published build, not the
// recipe at git HEAD) and refuses the others with the recipe untouched:
// with --public-key (kubepkg's plain keys) and with --root-key (a root
// chain that rotated the index key).
func TestBumpIndexClientAgrees(t *testing.T) {
	helm := upstreamtest.HelmRepo(t, []upstreamtest.HelmChart{{Name: "demo", Version: "1.0.0"}, {Name: "demo", Version: "1.2.0"}})
	work := t.TempDir()
	key, other := genKey(t), genKey(t)
	pem, err := key.MarshalPEM()
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, work, map[string]string{
		"recipes/demo/recipe.yaml": metaRecipe("demo", "1.0.0"),
		"recipes/demo/watch.yaml":  fmt.Sprintf("apiVersion: kbuild.dev/v1alpha1\nkind: Watch\nupstream:\n  helm: {repository: %q, chart: demo}\n", helm),
		"keys/index.pub":           string(key.Public().PEM()),
	})
	os.WriteFile(filepath.Join(work, "keys", "index.key"), pem, 0o600)
	// Published: demo 1.0.0 build 1. Committed since: build 2, so a diff
	// against git HEAD would say build 2.
	if r := kbuild(t, work, nil, "build", "recipes/demo", "-o", "dist", "--cache-dir", "cache"); r.code != 0 {
		t.Fatalf("build: %s", r)
	}
	if r := kbuild(t, work, nil, "repo", "index", "dist", "-o", "site/index.yaml", "--sign-key", "keys/index.key"); r.code != 0 {
		t.Fatalf("repo index: %s", r)
	}
	edit(t, filepath.Join(work, "recipes", "demo", "recipe.yaml"), "build: 1", "build: 2")
	testenv.Git(t, work, "init", "-q")
	testenv.Git(t, work, "add", "recipes", "keys/index.pub")
	testenv.Git(t, work, "commit", "-q", "-m", "demo 1.0.0 build 2")
	data, err := os.ReadFile(filepath.Join(work, "site", "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	signed, err := os.ReadFile(filepath.Join(work, "site", "index.yaml.sig"))
	if err != nil {
		t.Fatal(err)
	}

	sigFile := func(data []byte, k *trust.PrivateKey) []byte {
		sigs, err := trust.Sign(data, k)
		if err != nil {
			t.Fatal(err)
		}
		b, err := index.MarshalSignatures(sigs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	plain := func(k *trust.PrivateKey) []byte {
		raw, err := k.Sign(data)
		if err != nil {
			t.Fatal(err)
		}
		return []byte(base64.StdEncoding.EncodeToString(raw) + "\n")
	}
	tampered := []byte(strings.Replace(string(data), "demo", "dem0", 1))
	for _, tc := range []struct {
		name      string
		data, sig []byte
		accept    bool // what the table expects kubepkg to do
	}{
		{"as kbuild signed it", data, signed, true},
		{"a plain base64 signature by the key", data, plain(key), true},
		{"signed by the key under another keyid", data, []byte(strings.Replace(string(signed), key.KeyID(), other.KeyID(), 1)), true},
		{"signed by another key", data, sigFile(data, other), false},
		{"another key's plain signature", data, plain(other), false},
		{"no index.yaml.sig", data, nil, false},
		{"an index changed after signing", tampered, signed, false},
		{"not a signature", data, []byte("<html>404</html>\n"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kerr := kubepkgclient.VerifyWithKeys(tc.data, tc.sig, []string{string(key.Public().PEM())})
			accept := kerr == nil
			if accept != tc.accept {
				t.Fatalf("the table says kubepkg accepts = %v, kubepkgclient says %v", tc.accept, kerr)
			}
			files := map[string][]byte{"index.yaml": tc.data}
			if tc.sig != nil {
				files["index.yaml.sig"] = tc.sig
			}
			r, changed := bumpAgainst(t, work, files, "--public-key", "keys/index.pub")
			if !accept {
				if r.code == 0 || changed {
					t.Errorf("kubepkg refuses this index (%v), but kbuild bump --index used it (exit %d; recipe changed: %v): %s", kerr, r.code, changed, r)
				}
				if !strings.Contains(r.stderr, "index.yaml") {
					t.Errorf("the refusal does not name the index: %s", r)
				}
				return
			}
			if r.code != 0 || !strings.Contains(r.stdout, "demo: 1.0.0 build 1 -> 1.2.0 build 1") {
				t.Errorf("kubepkg accepts this index; kbuild bump --index = %s, want the bump diffed against published build 1", r)
			}
		})
	}

	// With a root: root/1.yaml gives the index role to other, root/2.yaml
	// (root.yaml) rotates it to key; bump is given the root key.
	rootKey := genKey(t)
	rootPub := filepath.Join(work, "root.pub")
	os.WriteFile(rootPub, rootKey.Public().PEM(), 0o644)
	roots := map[string][]byte{}
	cfg := trust.RootConfig{Expires: time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second), RootKeys: []*trust.PublicKey{rootKey.Public()}, RootThreshold: 1,
		IndexKeys: []*trust.PublicKey{other.Public()}, IndexThreshold: 1}
	r1, err := trust.NewRoot(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.IndexKeys = []*trust.PublicKey{key.Public()}
	r2, err := r1.Next(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range []*trust.Root{r1, r2} {
		if err := r.Sign(rootKey); err != nil {
			t.Fatal(err)
		}
		b, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		roots[sitelayout.RootVersionFile(i+1)] = b
		roots[sitelayout.RootFile] = b
	}
	for _, tc := range []struct {
		name   string
		sig    []byte
		accept bool
	}{
		{"root: signed by the index key", signed, true},
		{"root: signed by the rotated-out index key", sigFile(data, other), false},
		{"root: signed by the root key", sigFile(data, rootKey), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{"index.yaml": data, "index.yaml.sig": tc.sig}
			for n, b := range roots {
				files[n] = b
			}
			site := t.TempDir()
			writeSite(t, site, files)
			kerr := kubepkgclient.LoadWithRoot(kubepkgclient.Dir(site), []string{string(rootKey.Public().PEM())}, 1, time.Now())
			if (kerr == nil) != tc.accept {
				t.Fatalf("the table says kubepkg accepts = %v, kubepkgclient says %v", tc.accept, kerr)
			}
			r, changed := bumpAgainst(t, work, files, "--root-key", rootPub)
			if !tc.accept && (r.code == 0 || changed) {
				t.Errorf("kubepkg refuses this index (%v), but kbuild bump --index used it (exit %d; recipe changed: %v): %s", kerr, r.code, changed, r)
			}
			if tc.accept && (r.code != 0 || !strings.Contains(r.stdout, "demo: 1.0.0 build 1 -> 1.2.0 build 1")) {
				t.Errorf("kubepkg accepts this index; kbuild bump --index = %s, want the bump diffed against published build 1", r)
			}
		})
	}
}

// bumpAgainst serves files over HTTP as a site, runs kbuild bump
// recipes/demo --index SITE/index.yaml with trustFlags in a clone of
// repo, and returns the result and whether the recipe changed.
func bumpAgainst(t *testing.T, repo string, files map[string][]byte, trustFlags ...string) (result, bool) {
	t.Helper()
	site := t.TempDir()
	writeSite(t, site, files)
	srv := httptest.NewServer(http.FileServer(http.Dir(site)))
	defer srv.Close()
	clone := filepath.Join(t.TempDir(), "repo")
	testenv.Git(t, filepath.Dir(clone), "clone", "-q", repo, clone)
	file := filepath.Join(clone, "recipes", "demo", "recipe.yaml")
	before, _ := os.ReadFile(file)
	args := append([]string{"bump", "recipes/demo", "--index", srv.URL + "/index.yaml", "--cache-dir", filepath.Join(repo, "cache")}, trustFlags...)
	r := kbuild(t, clone, nil, args...)
	after, _ := os.ReadFile(file)
	return r, string(after) != string(before)
}

// writeSite writes files (slash-separated names) under dir.
func writeSite(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func genKey(t *testing.T) *trust.PrivateKey {
	t.Helper()
	k, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
