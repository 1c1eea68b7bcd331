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

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/internal/upstreamtest"
	"kbuild.dev/kbuild/sources"
	"kbuild.dev/kbuild/watch"
)

// repo is a recipes repository in a temporary git work tree.
type repo struct {
	t    *testing.T
	root string
}

func newRepo(t *testing.T) *repo {
	root := t.TempDir()
	testenv.Git(t, root, "init", "-q")
	return &repo{t: t, root: root}
}

// add writes recipes/NAME/{recipe,watch}.yaml and commits them; it
// returns the recipe directory.
func (r *repo) add(name, recipe, rule string) string {
	dir := filepath.Join(r.root, "recipes", name)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "recipe.yaml"), []byte(recipe), 0o644)
	if rule != "" {
		os.WriteFile(filepath.Join(dir, "watch.yaml"), []byte(rule), 0o644)
	}
	testenv.Git(r.t, r.root, "add", "-A")
	testenv.Git(r.t, r.root, "commit", "-q", "-m", "add "+name)
	return dir
}

func bumper(t *testing.T) *Bumper {
	f, err := sources.New(sources.WithCacheDir(t.TempDir()), sources.WithPlainHTTP(true))
	if err != nil {
		t.Fatal(err)
	}
	b, err := builder.New(f, nil, builder.WithOutputDir(t.TempDir()), builder.WithJobs(1), builder.WithEpoch(time.Unix(0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	return &Bumper{Fetcher: f, Builder: b,
		Looker: watch.NewLooker(watch.WithPlainHTTP(plainhttp.Policy{Loopback: true}), watch.WithTimeout(10*time.Second))}
}

// changedLines returns the lines of after that differ from before's, and
// fails unless both have as many lines.
func changedLines(t *testing.T, before, after []byte) []string {
	t.Helper()
	b, a := strings.Split(string(before), "\n"), strings.Split(string(after), "\n")
	if len(a) != len(b) {
		t.Fatalf("the bump changed the number of lines: %d -> %d\n%s", len(b), len(a), after)
	}
	var out []string
	for i := range a {
		if a[i] != b[i] {
			out = append(out, strings.TrimSpace(a[i]))
		}
	}
	return out
}

const opRecipe = `# op: an operator from its release manifest.
apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: op
  annotations:
    kubepkg.dev/description: "an operator"   # kept
spec:
  version: 1.9.0
  build: 3
  sources:
    operator:
      # the release asset
      url: %[1]s/download/v1.9.0/op.yaml
      sha256: %[2]s
    img:
      image: {ref: "%[3]s"}
  charts:
    op:
      from: [operator]
  package:
    provides: [op, "build:op@1.9.0+build.3"]
    rollback: {safe: true}
    images:
      - %[3]s  # the operator
      - %[4]s
    variants:
      - name: default
        components:
          - name: op
            path: op
`

const opRule = `apiVersion: kbuild.dev/v1alpha1
kind: Watch
upstream:
  github: {repository: o/op, api: %q, assets: [op.yaml]}
  versions: {strip: [v], constraint: "~1.9"}
sources:
  operator: {asset: op.yaml}
images:
  - {repository: "%s/op", tag: "v{version}"}
`

func manifest(v string) []byte {
	return []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: op\ndata:\n  version: \"" + v + "\"\n")
}

// TestBumpRelease bumps a recipe that follows GitHub-style releases: the
// asset's URL and verified digest, the image re-pinned for the platform,
// version, build and build capability; every other line as it was.
// Bumps upstream refuses (a lying asset, an image without the platform)
// and a bump to the same version change nothing.
func TestBumpRelease(t *testing.T) {
	reg := testenv.Registry(t)
	images := fmt.Sprintf("%s/bump/%d", reg, time.Now().UnixNano())
	d190 := upstreamtest.PushImage(t, reg, strings.TrimPrefix(images, reg+"/")+"/op", "v1.9.0", "linux/amd64")
	d191 := upstreamtest.PushImage(t, reg, strings.TrimPrefix(images, reg+"/")+"/op", "v1.9.1", "linux/amd64", "linux/arm64")
	upstreamtest.PushImage(t, reg, strings.TrimPrefix(images, reg+"/")+"/op", "v1.9.2", "linux/arm64")
	upstreamtest.PushImage(t, reg, strings.TrimPrefix(images, reg+"/")+"/op", "v1.9.3", "linux/amd64")
	helper := images + "/helper:v0.2.2@" + upstreamtest.PushImage(t, reg, strings.TrimPrefix(images, reg+"/")+"/helper", "v0.2.2", "linux/amd64")
	api := upstreamtest.GitHubAPI(t, "o/op", []upstreamtest.Release{
		{Tag: "v1.9.3", Assets: map[string][]byte{"op.yaml": manifest("1.9.3")}, LieAbout: "op.yaml"},
		{Tag: "v1.9.2", Assets: map[string][]byte{"op.yaml": manifest("1.9.2")}},
		{Tag: "v1.9.1", Assets: map[string][]byte{"op.yaml": manifest("1.9.1")}},
		{Tag: "v1.9.0", Assets: map[string][]byte{"op.yaml": manifest("1.9.0")}},
	})
	r := newRepo(t)
	old := images + "/op:v1.9.0@" + d190
	dir := r.add("op", fmt.Sprintf(opRecipe, api, strings.TrimPrefix(upstreamtest.Digest(manifest("1.9.0")), "sha256:"), old, helper), fmt.Sprintf(opRule, api, images))
	file := filepath.Join(dir, "recipe.yaml")
	before, _ := os.ReadFile(file)
	b := bumper(t)
	ctx := context.Background()

	unchanged := func(what string) {
		t.Helper()
		if now, _ := os.ReadFile(file); !bytes.Equal(now, before) {
			t.Errorf("%s changed the recipe:\n%s", what, now)
		}
	}
	res, err := b.Bump(ctx, dir, "1.9.0")
	if err != nil || res.Changed {
		t.Fatalf("Bump to the same version = %+v, %v; want nothing changed", res, err)
	}
	unchanged("a bump to the same version")

	_, err = b.Bump(ctx, dir, "1.9.3")
	if !errors.Is(err, ErrDigest) || !strings.Contains(err.Error(), upstreamtest.Digest(manifest("1.9.3"))) {
		t.Errorf("Bump to a release that lies about its asset = %v, want ErrDigest naming the served digest", err)
	}
	unchanged("a refused bump (lying asset)")

	_, err = b.Bump(ctx, dir, "1.9.2")
	if !errors.Is(err, watch.ErrNoPlatform) || !strings.Contains(err.Error(), "linux/amd64") {
		t.Errorf("Bump to an image without linux/amd64 = %v, want ErrNoPlatform", err)
	}
	unchanged("a refused bump (no platform image)")

	_, err = b.Bump(ctx, dir, "2.0.0")
	if !errors.Is(err, ErrNotAllowed) {
		t.Errorf("Bump to a version upstream does not list = %v, want ErrNotAllowed", err)
	}

	res, err = b.Bump(ctx, dir, "1.9.1")
	if err != nil {
		t.Fatalf("Bump(1.9.1) = %v", err)
	}
	after, _ := os.ReadFile(file)
	newRef := images + "/op:v1.9.1@" + d191
	want := []string{
		"version: 1.9.1",
		"build: 1",
		"url: " + api + "/download/v1.9.1/op.yaml",
		"sha256: " + strings.TrimPrefix(upstreamtest.Digest(manifest("1.9.1")), "sha256:"),
		`image: {ref: "` + newRef + `"}`,
		`provides: [op, "build:op@1.9.1+build.1"]`,
		"- " + newRef + "  # the operator",
	}
	if got := changedLines(t, before, after); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changed lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.Report == nil || !res.Report.Changed() {
		t.Fatalf("no rendered diff: %+v", res.Report)
	}
	var text bytes.Buffer
	res.Report.WriteText(&text)
	if !strings.Contains(text.String(), "-  version: 1.9.0") || !strings.Contains(text.String(), "+  version: 1.9.1") {
		t.Errorf("diff does not show the ConfigMap's change:\n%s", text.String())
	}
	// Bumped again to where it is: nothing changes.
	if res, err := b.Bump(ctx, dir, ""); err == nil || res != nil && res.Changed {
		t.Errorf("Bump to the newest (1.9.3, which lies) = %+v, %v; want refused", res, err)
	}
	if res, err := b.Bump(ctx, dir, "1.9.1"); err != nil || res.Changed {
		t.Errorf("Bump(1.9.1) again = %+v, %v; want nothing changed", res, err)
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, after) {
		t.Errorf("a second bump changed the recipe")
	}
}

const chartRecipe = `apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: demo
  annotations: {kubepkg.dev/description: "a chart"}
spec:
  version: 1.0.0
  build: 2
  sources:
    up:
      chart:
        repository: %[1]s
        name: demo
        version: 1.0.0
        digest: %[2]s
    stack:
      git: {url: "%[4]s", commit: %[5]s, path: chart}
  charts:
    demo:
      from: [up]
      values:
        image:
          repository: %[3]s
          tag: '7.0@%[6]s' # from appVersion
    stack:
      from: [stack]
  package:
    rollback: {safe: true}
    images:
      - %[3]s:7.0@%[6]s
    variants:
      - name: default
        components:
          - {name: demo, path: demo}
          - {name: stack, path: stack}
`

const chartRule = `apiVersion: kbuild.dev/v1alpha1
kind: Watch
upstream:
  helm: {repository: %q, chart: demo}
sources:
  up: {chart: true}
  stack: {gitTag: "v{version}"}
images:
  - {repository: %q, tag: "{appVersion}"}
`

// TestBumpChart bumps a recipe that follows a Helm repository: the chart
// version and its verified digest, a git source to the tag of the same
// version (git daemon), the image tag from the new chart's appVersion in
// values and images. A chart whose index lies about its digest is refused.
func TestBumpChart(t *testing.T) {
	reg := testenv.Registry(t)
	path := fmt.Sprintf("bump/%d/demo", time.Now().UnixNano())
	image := reg + "/" + path
	d70 := upstreamtest.PushImage(t, reg, path, "7.0", "linux/amd64")
	d72 := upstreamtest.PushImage(t, reg, path, "7.2", "linux/amd64", "linux/arm64")
	upstreamtest.PushImage(t, reg, path, "7.4", "linux/amd64")
	helm := upstreamtest.HelmRepo(t, []upstreamtest.HelmChart{
		{Name: "demo", Version: "1.0.0", AppVersion: "7.0"},
		{Name: "demo", Version: "1.1.0", AppVersion: "7.2"},
		{Name: "demo", Version: "1.2.0", AppVersion: "7.4", Lie: true},
		{Name: "demo", Version: "1.0.1", AppVersion: "7.0", Broken: true},
	})
	gitURL, commits := upstreamtest.GitDaemon(t, []string{"v1.0.0", "v1.0.1", "v1.1.0", "v1.2.0"})
	r := newRepo(t)
	dir := r.add("demo", fmt.Sprintf(chartRecipe, helm, upstreamtest.Digest(upstreamtest.ChartArchive("demo", "1.0.0", "7.0")), image, gitURL, commits["v1.0.0"], d70), fmt.Sprintf(chartRule, helm, image))
	file := filepath.Join(dir, "recipe.yaml")
	before, _ := os.ReadFile(file)
	b := bumper(t)
	ctx := context.Background()

	_, err := b.Bump(ctx, dir, "")
	if err == nil || !strings.Contains(err.Error(), "digest") || !strings.Contains(err.Error(), "1.2.0") {
		t.Errorf("Bump to the lying chart 1.2.0 = %v, want a digest mismatch", err)
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, before) {
		t.Fatalf("a refused bump changed the recipe")
	}
	_, err = b.Bump(ctx, dir, "1.0.1")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "put back as it was") {
		t.Errorf("Bump to a chart that does not render = %v, want ErrInvalid", err)
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, before) {
		t.Fatalf("a bump that does not validate left the recipe changed:\n%s", now)
	}
	res, err := b.Bump(ctx, dir, "1.1.0")
	if err != nil {
		t.Fatalf("Bump(1.1.0) = %v", err)
	}
	after, _ := os.ReadFile(file)
	want := []string{
		"version: 1.1.0",
		"build: 1",
		"version: 1.1.0",
		"digest: " + upstreamtest.Digest(upstreamtest.ChartArchive("demo", "1.1.0", "7.2")),
		`git: {url: "` + gitURL + `", commit: ` + commits["v1.1.0"] + `, path: chart}`,
		"tag: '7.2@" + d72 + "' # from appVersion",
		"- " + image + ":7.2@" + d72,
	}
	if got := changedLines(t, before, after); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changed lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The bumped recipe builds reproducibly: two builds, the same archives.
	var digests [2]string
	for i := range digests {
		p, err := bumper(t).Builder.Prepare(ctx, dir)
		if err != nil {
			t.Fatalf("build %d of the bumped recipe: %v", i+1, err)
		}
		for _, c := range p.Charts {
			digests[i] += c.Key + "=" + c.Archive.Digest + " "
		}
	}
	if digests[0] != digests[1] || digests[0] == "" {
		t.Errorf("two builds of the bumped recipe: %q and %q", digests[0], digests[1])
	}
	var text bytes.Buffer
	res.Report.WriteText(&text)
	if !strings.Contains(text.String(), `+  tag: v1.1.0`) || !strings.Contains(text.String(), `+  version: 1.1.0`) {
		t.Errorf("diff does not show both charts' changes:\n%s", text.String())
	}
}

// TestBumpRequires bumps a meta package along the minor releases of what
// it requires: the version from one upstream, each requirement's
// constraint from its own; every other line kept.
func TestBumpRequires(t *testing.T) {
	kv := upstreamtest.GitHubAPI(t, "kubevirt/kubevirt", []upstreamtest.Release{{Tag: "v1.10.1"}, {Tag: "v1.10.0"}, {Tag: "v1.9.0"}})
	cdi := upstreamtest.Listing(t, []string{"v1.66.0/", "v1.67.0/", "v1.67.2/"})
	r := newRepo(t)
	dir := r.add("virt", `apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: virt
  annotations: {kubepkg.dev/description: "both"}
spec:
  version: 1.9.0
  build: 4
  package:
    rollback: {safe: false}
    variants:
      - name: default
        requires:
          - package: kubevirt
            version: "~1.9"   # the operator
          - package: cdi
            version: "~1.66"
`, fmt.Sprintf(`apiVersion: kbuild.dev/v1alpha1
kind: Watch
upstream:
  github: {repository: kubevirt/kubevirt, api: %q}
  versions: {pattern: '^v(\d+\.\d+\.0)$'}
also:
  cdi:
    listing: {url: %q}
    versions: {pattern: '^v(\d+\.\d+\.0)$'}
requires:
  - {package: kubevirt, version: "~{major}.{minor}"}
  - {package: cdi, version: "~{major}.{minor}", from: cdi}
`, kv, cdi))
	file := filepath.Join(dir, "recipe.yaml")
	before, _ := os.ReadFile(file)
	if _, err := bumper(t).Bump(context.Background(), dir, ""); err != nil {
		t.Fatalf("Bump = %v", err)
	}
	after, _ := os.ReadFile(file)
	want := []string{"version: 1.10.0", "build: 1", `version: "~1.10"   # the operator`, `version: "~1.67"`}
	if got := changedLines(t, before, after); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changed lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestBumpAlsoOnly bumps a recipe whose package upstream stays where it
// is while an upstream under also: (a helper image on its own release
// line) moves: the images that follow it are re-pinned, the version
// stays, the build goes up by one with the build capability, and the
// result says which upstream moved. Once re-pinned, a second bump
// changes nothing.
func TestBumpAlsoOnly(t *testing.T) {
	reg := testenv.Registry(t)
	images := fmt.Sprintf("%s/bump/%d", reg, time.Now().UnixNano())
	path := strings.TrimPrefix(images, reg+"/")
	d190 := upstreamtest.PushImage(t, reg, path+"/op", "v1.9.0", "linux/amd64")
	h022 := upstreamtest.PushImage(t, reg, path+"/helper", "v0.2.2", "linux/amd64")
	h030 := upstreamtest.PushImage(t, reg, path+"/helper", "v0.3.0", "linux/amd64")
	api := upstreamtest.GitHubAPI(t, "o/op", []upstreamtest.Release{
		{Tag: "v1.9.0", Assets: map[string][]byte{"op.yaml": manifest("1.9.0")}},
	})
	helpers := upstreamtest.GitHubAPI(t, "o/helper", []upstreamtest.Release{{Tag: "v0.3.0"}, {Tag: "v0.2.2"}})
	r := newRepo(t)
	old := images + "/op:v1.9.0@" + d190
	rule := fmt.Sprintf(opRule, api, images) + fmt.Sprintf("  - {repository: \"%s/helper\", tag: \"v{version}\", from: helper}\nalso:\n  helper:\n    github: {repository: o/helper, api: %q}\n    versions: {strip: [v]}\n", images, helpers)
	dir := r.add("op", fmt.Sprintf(opRecipe, api, strings.TrimPrefix(upstreamtest.Digest(manifest("1.9.0")), "sha256:"), old, images+"/helper:v0.2.2@"+h022), rule)
	file := filepath.Join(dir, "recipe.yaml")
	before, _ := os.ReadFile(file)
	b := bumper(t)
	ctx := context.Background()

	res, err := b.Bump(ctx, dir, "")
	if err != nil {
		t.Fatalf("Bump = %v", err)
	}
	if !res.Changed || res.To != "1.9.0" || res.Build != 4 || strings.Join(res.Also, ";") != "helper v0.2.2 -> v0.3.0" {
		t.Errorf("Bump = changed %v, to %s build %d, also %q; want changed, 1.9.0 build 4, helper v0.2.2 -> v0.3.0", res.Changed, res.To, res.Build, res.Also)
	}
	after, _ := os.ReadFile(file)
	want := []string{
		"build: 4",
		`provides: [op, "build:op@1.9.0+build.4"]`,
		"- " + images + "/helper:v0.3.0@" + h030,
	}
	if got := changedLines(t, before, after); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changed lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	res, err = b.Bump(ctx, dir, "")
	if err != nil || res.Changed {
		t.Errorf("a second Bump = %+v, %v; want nothing changed", res, err)
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, after) {
		t.Errorf("a second bump changed the recipe:\n%s", now)
	}
}
