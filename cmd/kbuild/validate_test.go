package main

import (
	"os"
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
	// A new build of the set pinning the newest published foreman build
	// (the recipe's own version and build is published with other
	// members, and pulp's builds pin another foreman image).
	data, err := os.ReadFile(filepath.Join(dir, "foreman-stack", "recipe.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	set5 := filepath.Join(work, "recipes", "foreman-stack")
	os.MkdirAll(set5, 0o755)
	os.WriteFile(filepath.Join(set5, "recipe.yaml"), []byte(strings.NewReplacer("build: 1\n", "build: 5\n", "=3.15.0+build.1", "=3.15.0+build.2", "          - package: pulp\n            version: \"=3.73.0+build.1\"\n", "").Replace(string(data))), 0o644)
	r = runInProcess("validate", "--offline", set5, "--index", site, "--index-public-key", key+".pub")
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

// TestValidateIndexStaleRecipe: validate --index reports a recipe whose
// version and build are published with another spec (here without the
// build capability its set requires) as what to fix — bump spec.build —
// on the recipe and on the set, instead of telling the set's author to
// add a capability the recipe already has.
func TestValidateIndexStaleRecipe(t *testing.T) {
	dir := filepath.Join("testdata", "sets-vspelling")
	idx := planIndex(t, dir, "virt-template@0.2.2+1") // published without provides
	pub := signIndex(t, idx)
	r := runInProcess("validate", "--offline", filepath.Join(dir, "virt-template"), filepath.Join(dir, "set-plain"), "--index", idx, "--public-key", pub)
	bump := `virt-template 0.2.2 build 1 is published with spec.provides absent, the recipe now says ["build:virt-template@0.2.2+build.1"]; published versions never change (kubepkg clients keep the published spec), so bump spec.build`
	if r.code != 1 || strings.Count(r.stdout, bump) != 2 || strings.Contains(r.stdout, "add \"build:") {
		t.Fatalf("validate a set whose member changed without a build bump: %s\nwant %q on the member and the set", r, bump)
	}
	mustContain(t, "validate output", r.stdout,
		filepath.Join(dir, "virt-template")+": FAILED\n  error: line 9: spec.build: the recipe changed since its version and build were published: "+bump,
		filepath.Join(dir, "set-plain")+": FAILED\n  error: line 12: spec.package.variants: invalid release set: member virt-template 0.2.2 build 1: the recipe changed",
	)
}

// TestValidateIndexSetMembersMove: with --index (a suite), a recipe of a
// member's patch release is reported: members installed with the
// suite's release set (spec.version ~3.15) would move to it.
func TestValidateIndexSetMembersMove(t *testing.T) {
	work := t.TempDir()
	key := keygen(t, work, "index")
	site := filepath.Join(work, "site")
	if r := repoIndex(t, stacktest.Dist(), site, "--sign-key", key+".key"); r.code != 0 {
		t.Fatal(r)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "sets", "foreman", "recipe.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ version, want string }{
		{"3.15.1", "release set foreman-stack 3.15.0 build 3 pins foreman 3.15.0 build 1, but members installed with it (spec.version \"~3.15\") move to foreman 3.15.1 build 1 in the recipes validated or " + site},
		{"3.16.0", ""},
	} {
		rd := filepath.Join(work, "recipes-"+tc.version, "foreman")
		os.MkdirAll(rd, 0o755)
		os.WriteFile(filepath.Join(rd, "recipe.yaml"), []byte(strings.Replace(string(data), "version: 3.15.0", "version: "+tc.version, 1)), 0o644)
		r := runInProcess("validate", "--offline", rd, "--index", site, "--public-key", key+".pub")
		if tc.want == "" {
			if r.code != 0 {
				t.Errorf("validate foreman %s: %s", tc.version, r)
			}
			continue
		}
		if r.code != 1 || !strings.Contains(r.stdout, tc.want) {
			t.Errorf("validate foreman %s = %s\nwant %q", tc.version, r, tc.want)
		}
	}
}
