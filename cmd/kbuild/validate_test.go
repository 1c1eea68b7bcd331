package main

import (
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/stacktest"
)

// TestValidateSets: a release set is checked against the recipes
// validated and, with --index, the published index.
func TestValidateSets(t *testing.T) {
	dir := filepath.Join("testdata", "sets")
	r := runInProcess("validate", "--offline", dir)
	if r.code != 1 || !strings.Contains(r.stdout, "2 of 6 recipes failed") {
		t.Fatalf("validate sets: %s", r)
	}
	mustContain(t, "validate output", r.stdout,
		filepath.Join(dir, "foreman-stack")+": ok",
		filepath.Join(dir, "stack-missing")+": FAILED\n  error: line 12: spec.package.variants: invalid release set: stack-missing 3.15.0 build 1: member pulp 3.73.0 build 7 is not in the recipes validated",
		filepath.Join(dir, "stack-conflict")+": FAILED\n  error: line 12: spec.package.variants: invalid release set: stack-conflict 3.15.0 build 1: image quay.io/foreman/foreman is pinned to two digests: sha256:9c77128c",
	)
	// With the published index, a set may pin builds that no recipe makes
	// any more.
	work := t.TempDir()
	key := keygen(t, work, "index")
	site := filepath.Join(work, "site")
	if r := repoIndex(t, stacktest.Dist(), site, "--sign-key", key+".key"); r.code != 0 {
		t.Fatal(r)
	}
	r = runInProcess("validate", "--offline", filepath.Join(dir, "foreman-stack"), "--index", site, "--index-public-key", key+".pub")
	if r.code != 0 || !strings.Contains(r.stdout, "0 of 1 recipes failed") {
		t.Fatalf("validate a set against the index: %s", r)
	}
	r = runInProcess("validate", "--offline", filepath.Join(dir, "stack-missing"), "--index", site, "--public-key", key+".pub")
	if r.code != 1 || !strings.Contains(r.stdout, "member pulp 3.73.0 build 7 is not in the recipes validated or "+site) {
		t.Fatalf("validate a set with a member in neither: %s", r)
	}
	if r := runInProcess("validate", "--offline", dir, "--index", site); r.code != 2 || !strings.Contains(r.stderr, "--index needs --public-key, --root-key or --index-root") {
		t.Fatalf("--index without trust: %s", r)
	}
}

// TestValidateSetsVersionSpelling: a member whose recipe says
// "version: v0.2.2" is published as 0.2.2, and a set may pin it as
// "=0.2.2+build.1" or "=v0.2.2+build.1": one version, two spellings.
func TestValidateSetsVersionSpelling(t *testing.T) {
	dir := filepath.Join("testdata", "sets-vspelling")
	for _, set := range []string{"set-plain", "set-v"} {
		r := runInProcess("validate", "--offline", filepath.Join(dir, "virt-template"), filepath.Join(dir, set))
		if r.code != 0 || !strings.Contains(r.stdout, "0 of 2 recipes failed") {
			t.Errorf("validate %s: %s", set, r)
		}
	}
}
