package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPublishSuites: with suites.yaml, publish writes the first suite's
// complete site under SITE/unstable/ and nothing at the top; without it
// (TestPublishRoot) the site is as before.
func TestPublishSuites(t *testing.T) {
	work := t.TempDir()
	key := filepath.Join(work, "index")
	if r := kbuild(t, work, nil, "repo", "keygen", key); r.code != 0 {
		t.Fatalf("keygen: %s", r)
	}
	data, err := os.ReadFile("../../suite/testdata/suites.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(work, "suites.yaml"), data, 0o644)
	r := kbuild(t, work, nil, "publish", "--sign-key", key+".key")
	if r.code != 0 || !strings.Contains(r.stderr, "suites.yaml: publishing into suite unstable (_site/unstable)") || !strings.Contains(r.stdout, "wrote _site/unstable/index.yaml: 3 packages, 3 versions") {
		t.Fatalf("publish with suites: %s", r)
	}
	if _, err := os.Stat(filepath.Join(work, "_site", "index.yaml")); err == nil {
		t.Fatal("publish with suites wrote _site/index.yaml")
	}
	if r := kbuild(t, work, nil, "repo", "verify", "_site/unstable/index.yaml", "--public-key", key+".pub"); r.code != 0 {
		t.Fatalf("verify unstable: %s", r)
	}
	if page := readFile(t, filepath.Join(work, "_site", "unstable", "packages", "smart-proxy.html")); !strings.Contains(page, `<th scope="col">Suites</th>`) || !strings.Contains(page, `<span class="badge suite">unstable</span>`) {
		t.Errorf("the unstable suite's page of smart-proxy does not say the suite holds it:\n%s", page)
	}
	// rootSuite: the site root serves unstable too, for the subscribers
	// of the index from before suites.
	os.WriteFile(filepath.Join(work, "suites.yaml"), append([]byte("rootSuite: unstable\n"), data...), 0o644)
	r = kbuild(t, work, nil, "publish", "--sign-key", key+".key")
	if r.code != 0 || !strings.Contains(r.stdout, "wrote _site/index.yaml: suite unstable, also served at the site root (rootSuite)") {
		t.Fatalf("publish with rootSuite: %s", r)
	}
	if a, b := readFile(t, filepath.Join(work, "_site", "index.yaml")), readFile(t, filepath.Join(work, "_site", "unstable", "index.yaml")); a != b {
		t.Error("the site root's index.yaml is not the unstable suite's")
	}
	if r := kbuild(t, work, nil, "repo", "verify", "_site/index.yaml", "--public-key", key+".pub"); r.code != 0 || !strings.Contains(r.stdout, "3 packages, 3 versions") {
		t.Fatalf("verify the site root: %s", r)
	}
	os.WriteFile(filepath.Join(work, "suites.yaml"), []byte("apiVersion: kbuild.dev/v1\nkind: Suites\nsuites: []\n"), 0o644)
	if r := kbuild(t, work, nil, "publish", "--sign-key", key+".key"); r.code != 1 || !strings.Contains(r.stderr, "suites.yaml: suites: none listed") {
		t.Fatalf("publish with an empty suites.yaml: %s", r)
	}
}
