package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/testenv"
)

// otherProxyDigest pins another foreman-proxy image for the tests that
// change smart-proxy's image.
const otherProxyDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"

// git runs git in dir with a fixed identity and fails the test on error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return testenv.Git(t, dir, args...)
}

// edit replaces old by new in file, failing when old is absent.
func edit(t *testing.T, file, old, new string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s does not contain %q", file, old)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// examplesRepo returns a git repository whose first commit holds the
// examples under recipes/.
func examplesRepo(t *testing.T) string {
	t.Helper()
	testenv.Tool(t, "git")
	repo := t.TempDir()
	if err := copyDir(filepath.Join(repoRoot, "examples"), filepath.Join(repo, "recipes")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(repo, "recipes", "examples.go"))
	git(t, repo, "init", "-q")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "examples")
	return repo
}

// changeExamples makes the second commit's changes: a new build of
// smart-proxy with another image and replica count, virt-template's patch
// changed without a new build, virt-stack's requirements and rollback
// changed, and a new package.
func changeExamples(t *testing.T, repo string) {
	t.Helper()
	sp := filepath.Join(repo, "recipes", "smart-proxy", "recipe.yaml")
	edit(t, sp, "build: 1", "build: 2")
	edit(t, sp, "replicas: 2", "replicas: 3")
	edit(t, sp, "tag: nightly@sha256:244c756844a137990779ad153998c426eb0326d8d6f376192ea6e84947affd47", "tag: nightly@"+otherProxyDigest)
	edit(t, sp, "quay.io/foreman/foreman-proxy:nightly@sha256:244c756844a137990779ad153998c426eb0326d8d6f376192ea6e84947affd47", "quay.io/foreman/foreman-proxy:nightly@"+otherProxyDigest)
	vt := filepath.Join(repo, "recipes", "virt-template", "recipe.yaml")
	edit(t, vt, "replicas: 2", "replicas: 5")
	vs := filepath.Join(repo, "recipes", "virt-stack", "recipe.yaml")
	edit(t, vs, "build: 1", "build: 2")
	edit(t, vs, `version: ">=0.2.2 <0.3.0"`, `version: ">=0.2.2 <0.4.0"`)
	edit(t, vs, "rollback: {safe: true}", "rollback: {safe: false}")
	if err := copyDir(filepath.Join(repo, "recipes", "smart-proxy"), filepath.Join(repo, "recipes", "new-proxy")); err != nil {
		t.Fatal(err)
	}
	edit(t, filepath.Join(repo, "recipes", "new-proxy", "recipe.yaml"), "name: smart-proxy\n", "name: new-proxy\n")
}

func TestDiffBase(t *testing.T) {
	repo := examplesRepo(t)
	changeExamples(t, repo)
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "change")
	cache := t.TempDir()

	tests := []struct {
		name    string
		args    []string
		want    []string
		notWant []string
	}{
		{
			name: "new build with image and values changed",
			args: []string{"diff", "recipes/smart-proxy", "--base", "HEAD~1"},
			want: []string{
				"smart-proxy: 3.14.0 build 1 -> 3.14.0 build 2\n",
				"  image: - quay.io/foreman/foreman-proxy:nightly@sha256:244c756844a137990779ad153998c426eb0326d8d6f376192ea6e84947affd47\n",
				"  image: + quay.io/foreman/foreman-proxy:nightly@" + otherProxyDigest + "\n",
				"  objects: 0 added, 1 changed, 0 removed\n",
				"changed Deployment smart-proxy (chart smart-proxy)\n--- a/smart-proxy/Deployment/smart-proxy.yaml\n+++ b/smart-proxy/Deployment/smart-proxy.yaml\n",
				"-  replicas: 2\n+  replicas: 3\n",
				"+        - image: quay.io/foreman/foreman-proxy:nightly@" + otherProxyDigest + "\n",
			},
			notWant: []string{"warning:"},
		},
		{
			name: "patch changed without a new build",
			args: []string{"diff", "recipes/virt-template", "--base", "HEAD~1"},
			want: []string{
				"virt-template: 0.2.2 build 1 (same version and build)\n",
				"  warning: virt-template@0.2.2 build 1 is unchanged but its content differs (chart virt-template archive sha256:",
				"changed Deployment kubevirt/virt-template-controller (chart virt-template)\n",
				"-  replicas: 2\n+  replicas: 5\n",
			},
			notWant: []string{"CustomResourceDefinition"},
		},
		{
			name: "requirements and rollback of a meta package",
			args: []string{"diff", "recipes/virt-stack", "--base", "HEAD~1"},
			want: []string{
				"virt-stack: 1.0.0 build 1 -> 1.0.0 build 2\n",
				"  requires (variant default): package virt-template >=0.2.2 <0.3.0 -> package virt-template >=0.2.2 <0.4.0\n",
				"  rollback: safe -> unsafe\n",
				"  objects: 0 added, 0 changed, 0 removed\n",
			},
		},
		{
			name: "new package",
			args: []string{"diff", "recipes/new-proxy", "--base", "HEAD~1"},
			want: []string{
				"new-proxy: new package, 3.14.0 build 2\n",
				"  chart smart-proxy: + sha256:",
				"  objects: 2 added, 0 changed, 0 removed\n",
				"added Deployment smart-proxy (chart smart-proxy)\n--- /dev/null\n+++ b/smart-proxy/Deployment/smart-proxy.yaml\n",
			},
		},
		{
			name: "the working tree against HEAD",
			args: []string{"diff", "recipes/"},
			want: []string{
				"new-proxy: 3.14.0 build 2 (same version and build)\n  no changes\n",
				"smart-proxy: 3.14.0 build 2 (same version and build)\n  no changes\n",
				"virt-stack: 1.0.0 build 2 (same version and build)\n  no changes\n",
			},
		},
		{
			name: "markdown for a step summary",
			args: []string{"diff", "recipes/smart-proxy", "recipes/virt-stack", "--base", "HEAD~1", "--format", "markdown"},
			want: []string{
				"### smart-proxy: 3.14.0 build 1 → 3.14.0 build 2\n\n| Change | Before | After |\n|---|---|---|\n",
				"| image |  | `quay.io/foreman/foreman-proxy:nightly@" + otherProxyDigest + "` |\n",
				"<details><summary>changed <code>Deployment smart-proxy</code> (chart smart-proxy)</summary>\n\n```diff\n",
				"### virt-stack: 1.0.0 build 1 → 1.0.0 build 2\n",
				"| requires (variant default) | `package virt-template >=0.2.2 <0.3.0` | `package virt-template >=0.2.2 <0.4.0` |\n",
				"| rollback | `safe` | `unsafe` |\n",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := kbuild(t, repo, nil, append(tc.args, "--cache-dir", cache)...)
			if r.code != 0 {
				t.Fatalf("kbuild %s: %s", strings.Join(tc.args, " "), r)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("kbuild %s: stdout lacks %q:\n%s", strings.Join(tc.args, " "), w, r)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(r.stdout+r.stderr, w) {
					t.Errorf("kbuild %s: output has %q:\n%s", strings.Join(tc.args, " "), w, r)
				}
			}
		})
	}
}

func TestDiffErrors(t *testing.T) {
	repo := examplesRepo(t)
	notGit := t.TempDir()
	if err := copyDir(filepath.Join(repoRoot, "examples", "virt-stack"), filepath.Join(notGit, "virt-stack")); err != nil {
		t.Fatal(err)
	}
	key := keygen(t, t.TempDir(), "k") + ".pub"
	tests := []struct {
		name string
		dir  string
		args []string
		code int
		want string
	}{
		{name: "no recipe", dir: repo, args: []string{"diff"}, code: 2, want: "name at least one recipe directory"},
		{name: "two bases", dir: repo, args: []string{"diff", "recipes/virt-stack", "--base", "HEAD", "--index", "index.yaml"}, code: 2, want: "--base and --index name two different bases; use one"},
		{name: "immutable check needs an index", dir: repo, args: []string{"diff", "recipes/virt-stack", "--fail-on-immutable-change"}, code: 2, want: "--fail-on-immutable-change compares with what is published: add --index REF"},
		{name: "bad output", dir: repo, args: []string{"diff", "recipes/virt-stack", "--format", "html"}, code: 2, want: `--format "html": use text or markdown`},
		{name: "bad output, old spelling", dir: repo, args: []string{"diff", "recipes/virt-stack", "-o", "html"}, code: 2, want: "warning: kbuild diff: -o/--output is deprecated and goes away in the next release; use --format\nkbuild diff: --format \"html\": use text or markdown"},
		{name: "unknown ref", dir: repo, args: []string{"diff", "recipes/virt-stack", "--base", "origin/nope"}, code: 1, want: `error: recipe recipes/virt-stack: base origin/nope: "origin/nope" is not a commit of the recipes repository; fetch it first (git fetch origin main) or name another`},
		{name: "not in git", dir: notGit, args: []string{"diff", "virt-stack"}, code: 1, want: "virt-stack is not in a git work tree, so there is no base to compare with; use --index REF"},
		{name: "unverified index", dir: repo, args: []string{"diff", "recipes/virt-stack", "--index", "nothing/index.yaml"}, code: 2, want: "--index REF needs --public-key FILE or --root-key FILE"},
		{name: "no index there", dir: repo, args: []string{"diff", "recipes/virt-stack", "--index", "nothing/index.yaml", "--public-key", key}, code: 1, want: "error: index: nothing/index.yaml: not found; nothing is published there yet, so compare with --base instead"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := kbuild(t, tc.dir, []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(notGit)}, append(tc.args, "--cache-dir", t.TempDir())...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("kbuild %s = exit %d, want exit %d with %q:\n%s", strings.Join(tc.args, " "), r.code, tc.code, tc.want, r)
			}
		})
	}
}

// publishedIndex builds the records in dist into index.yaml in a new
// directory and returns the directory.
func publishedIndex(t *testing.T, distDir string) string {
	t.Helper()
	builds, err := dist.Read(distDir)
	if err != nil {
		t.Fatal(err)
	}
	b := index.NewBuilder()
	for _, bd := range builds {
		if err := b.Add(bd.File, &bd.Record, nil); err != nil {
			t.Fatal(err)
		}
	}
	x, err := b.Index(time.Date(2026, 10, 10, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	data, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	site := t.TempDir()
	if err := os.WriteFile(filepath.Join(site, "index.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return site
}

// TestDiffAgainst publishes the examples to the real registry with an index
// beside them, then compares changed recipes with what is published: the
// charts are pulled by digest and rendered.
func TestDiffAgainst(t *testing.T) {
	reg := testenv.Registry(t)
	repo := examplesRepo(t)
	cache := t.TempDir()
	out := t.TempDir()
	env := []string{"SOURCE_DATE_EPOCH=1700000000"}
	r := kbuild(t, repo, env, "build", "recipes/", "--registry", uniqueRepo(t, reg), "--plain-http", "-o", out, "--cache-dir", cache)
	if r.code != 0 {
		t.Fatalf("kbuild build: %s", r)
	}
	site := publishedIndex(t, out)
	pub := signIndex(t, filepath.Join(site, "index.yaml"))
	srv := httptest.NewServer(http.FileServer(http.Dir(site)))
	defer srv.Close()
	url := srv.URL + "/index.yaml"

	// Unchanged recipes pass the immutability check, by URL and by path.
	for _, against := range []string{url, filepath.Join(site, "index.yaml")} {
		r = kbuild(t, repo, env, "diff", "recipes/", "--index", against, "--public-key", pub, "--plain-http", "--fail-on-immutable-change", "--cache-dir", cache)
		if r.code != 0 || strings.Count(r.stdout, "(same version and build)\n  no changes\n") != 3 {
			t.Fatalf("diff of what was published, against %s: %s", against, r)
		}
	}

	// A change without a new build fails the check, with the diff shown.
	changeExamples(t, repo)
	r = kbuild(t, repo, env, "diff", "recipes/virt-template", "--index", url, "--public-key", pub, "--plain-http", "--fail-on-immutable-change", "--cache-dir", cache)
	want := "error: recipe recipes/virt-template: virt-template@0.2.2 build 1 is already published with different content; published versions do not change, give the recipe a new build number (chart virt-template archive sha256:"
	if r.code != exitRefused || !strings.Contains(r.stderr, want) || !strings.Contains(r.stdout, "-  replicas: 2\n+  replicas: 5\n") {
		t.Fatalf("diff of a changed published version: want exit 3 with %q and the diff: %s", want, r)
	}
	// Without the flag it is a warning.
	r = kbuild(t, repo, env, "diff", "recipes/virt-template", "--index", url, "--public-key", pub, "--plain-http", "--cache-dir", cache)
	if r.code != 0 || !strings.Contains(r.stdout, "  warning: virt-template@0.2.2 build 1 is unchanged but its content differs") {
		t.Fatalf("diff without --fail-on-immutable-change: %s", r)
	}
	// The same content built at another time is another archive.
	r = kbuild(t, repo, []string{"SOURCE_DATE_EPOCH=1700000001"}, "diff", "recipes/new-proxy", "--index", url, "--public-key", pub, "--plain-http", "--fail-on-immutable-change", "--cache-dir", cache)
	if r.code != 0 || !strings.Contains(r.stdout, "new-proxy: new package, 3.14.0 build 2\n") {
		t.Fatalf("diff of a new package: %s", r)
	}

	// New builds compare with the newest published version and pass.
	r = kbuild(t, repo, env, "diff", "recipes/smart-proxy", "recipes/virt-stack", "--index", url, "--public-key", pub, "--plain-http", "--fail-on-immutable-change", "--format", "markdown", "--cache-dir", cache)
	for _, w := range []string{
		"### smart-proxy: 3.14.0 build 1 → 3.14.0 build 2\n",
		"-  replicas: 2\n+  replicas: 3\n",
		"### virt-stack: 1.0.0 build 1 → 1.0.0 build 2\n",
		"| rollback | `safe` | `unsafe` |\n",
	} {
		if r.code != 0 || !strings.Contains(r.stdout, w) {
			t.Errorf("diff of new builds against the index: want %q: %s", w, r)
		}
	}
	if strings.Contains(r.stdout, "chart smart-proxy") && !strings.Contains(r.stdout, "| chart smart-proxy | `sha256:") {
		t.Errorf("chart change not in the summary table: %s", r.stdout)
	}
}
