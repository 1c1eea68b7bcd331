package bump

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// member is a meta package that provides its build capability.
func member(name, version string, build int) string {
	return fmt.Sprintf(`apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: %[1]s
  annotations: {kubepkg.dev/description: "a member"}
spec:
  version: %[2]s
  build: %[3]d
  package:
    rollback: {safe: true}
    provides: ["build:%[1]s@%[2]s+build.%[3]d"]
    variants: [{name: default}]
`, name, version, build)
}

const setRecipe = `# the stack, tested together
apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: stack
  annotations: {kubepkg.dev/description: "a set"}
spec:
  version: 1.0.0
  build: 3
  package:
    rollback: {safe: false}
    provides: ["build:stack@1.0.0+build.3"]
    variants:
      - name: default
        requires:
          - package: a
            version: "=1.0.0+build.1"   # the operator
          - package: b
            version: "=1.0.0+build.1"
          - capability: "build:a@1.0.0+build.1"
          - capability: "build:b@1.0.0+build.1"
`

// published is an index holding the member builds given ("NAME VERSION
// BUILD"), each providing its build capability.
func published(t *testing.T, builds ...string) *index.RepositoryIndex {
	t.Helper()
	b := index.NewBuilder()
	for _, s := range builds {
		var name, version string
		var build int
		fmt.Sscanf(s, "%s %s %d", &name, &version, &build)
		rec := &spec.PackageSource{APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind, Metadata: spec.RecordMetadata{Name: name},
			Spec: spec.PackageSpec{Version: version, Build: build, Provides: []string{fmt.Sprintf("build:%s@%s+build.%d", name, version, build)},
				Variants: []spec.Variant{{Name: "default"}}}}
		if err := b.Add(s, rec, nil); err != nil {
			t.Fatal(err)
		}
	}
	x, err := b.Index(time.Unix(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestBumpSet bumps a release set to the builds its members' recipes are
// at: not before every one of them is published (it waits, and says for
// which), then every pin and build capability, the set's version with its
// members' shared version, build 1 and its own capability; every other
// line kept. Without the published index it refuses; bumped again it
// changes nothing; members moving apart keep the set's version and raise
// its build.
func TestBumpSet(t *testing.T) {
	r := newRepo(t)
	dir := r.add("stack", setRecipe, "")
	for name, body := range map[string]string{"a": member("a", "1.1.0", 1), "b": member("b", "1.1.0", 2)} {
		os.MkdirAll(filepath.Join(r.root, "recipes", name), 0o755)
		os.WriteFile(filepath.Join(r.root, "recipes", name, "recipe.yaml"), []byte(body), 0o644)
	}
	file := filepath.Join(dir, "recipe.yaml")
	before, _ := os.ReadFile(file)
	b := bumper(t)
	ctx := context.Background()

	if _, err := b.Bump(ctx, dir, ""); !errors.Is(err, ErrSetNeedsIndex) {
		t.Errorf("Bump of a set without the published index = %v, want ErrSetNeedsIndex", err)
	}
	b.Index = published(t, "a 1.0.0 1", "b 1.0.0 1", "a 1.1.0 1")
	res, err := b.Bump(ctx, dir, "")
	if err != nil || res.Changed || strings.Join(res.Waiting, ";") != "b 1.1.0 build 2" {
		t.Fatalf("Bump before b 1.1.0 build 2 is published = %+v, %v; want nothing changed, waiting for b 1.1.0 build 2", res, err)
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, before) {
		t.Fatalf("a waiting set bump changed the recipe:\n%s", now)
	}

	b.Index = published(t, "a 1.0.0 1", "b 1.0.0 1", "a 1.1.0 1", "b 1.1.0 2")
	res, err = b.Bump(ctx, dir, "")
	if err != nil {
		t.Fatalf("Bump = %v", err)
	}
	if !res.Changed || !res.Set || res.To != "1.1.0" || res.Build != 1 || strings.Join(res.Members, ";") != "a 1.0.0 build 1 -> 1.1.0 build 1;b 1.0.0 build 1 -> 1.1.0 build 2" {
		t.Errorf("Bump = %+v", res)
	}
	var text bytes.Buffer
	if res.Report == nil || res.Report.WriteText(&text) != nil || !strings.Contains(text.String(), "+ package b =1.1.0+build.2") {
		t.Errorf("the set's diff against the published index:\n%s", text.String())
	}
	after, _ := os.ReadFile(file)
	want := []string{
		"version: 1.1.0",
		"build: 1",
		`provides: ["build:stack@1.1.0+build.1"]`,
		`version: "=1.1.0+build.1"   # the operator`,
		`version: "=1.1.0+build.2"`,
		`- capability: "build:a@1.1.0+build.1"`,
		`- capability: "build:b@1.1.0+build.2"`,
	}
	if got := changedLines(t, before, after); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changed lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res, err := b.Bump(ctx, dir, ""); err != nil || res.Changed || len(res.Waiting) > 0 {
		t.Errorf("a second Bump = %+v, %v; want nothing changed", res, err)
	}

	// A member recipe behind its pin is refused: a pin never moves back.
	os.WriteFile(filepath.Join(r.root, "recipes", "b", "recipe.yaml"), []byte(member("b", "1.0.0", 1)), 0o644)
	if _, err := b.Bump(ctx, dir, ""); err == nil || !strings.Contains(err.Error(), "never moves a pin back") {
		t.Errorf("Bump with b's recipe behind its pin = %v, want a refusal", err)
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, after) {
		t.Errorf("a refused set bump changed the recipe:\n%s", now)
	}
	os.WriteFile(filepath.Join(r.root, "recipes", "b", "recipe.yaml"), []byte(member("b", "1.1.0", 2)), 0o644)

	// a moves on alone: the members no longer share a version, so the
	// set keeps 1.1.0 and takes build 2.
	os.WriteFile(filepath.Join(r.root, "recipes", "a", "recipe.yaml"), []byte(member("a", "1.1.1", 1)), 0o644)
	b.Index = published(t, "a 1.1.0 1", "b 1.1.0 2", "a 1.1.1 1")
	res, err = b.Bump(ctx, dir, "")
	if err != nil || !res.Changed || res.To != "1.1.0" || res.Build != 2 {
		t.Fatalf("Bump after a 1.1.1 = %+v, %v; want 1.1.0 build 2", res, err)
	}
	now, _ := os.ReadFile(file)
	if !strings.Contains(string(now), `version: "=1.1.1+build.1"   # the operator`) || !strings.Contains(string(now), "build: 2") || !strings.Contains(string(now), `"build:stack@1.1.0+build.2"`) {
		t.Errorf("the set after a 1.1.1:\n%s", now)
	}
}
