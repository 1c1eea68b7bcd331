package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/site"
)

// TestFollowFluxSemver: a Flux cluster following the testing suite
// (ref.semver over REPO/suites/testing/CHART, by Flux's selection rules,
// testenv.FluxSemver) gets exactly the builds testing holds, through the
// real commands against the real registry, with 'kbuild repo follow'
// after each: two builds of smart-proxy published into unstable; build 1
// promoted (picked), build 2 promoted (picked), build 2 withdrawn (build 1
// picked again, build 2's tag deleted from the suites' repositories), and
// the weekly re-signing of every suite, as scripts/publish.sh does it
// (nothing moves). Over the chart
// repository itself Flux would pick build 2 throughout; the real helm
// resolves the catalog's --version range to the same build. A followable tag
// keeps its digest, the real cosign verifies the followed chart with the
// repository's key, and no publish lock lands in the site.
func TestFollowFluxSemver(t *testing.T) {
	reg := testenv.Registry(t)
	helm := testenv.Tool(t, "helm")
	work, rootFile, idx, qa := qaRepository(t)
	suites, err := os.ReadFile("../../suite/testdata/suites.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(work, "suites.yaml"), append([]byte("rootSuite: unstable\n"), suites...), 0o644)
	publishArgs := []string{"publish", "recipes", "--registry", uniqueRepo(t, reg), "--plain-http", "--sign-key", idx + ".key", "--root", rootFile, "--site", "site", "--cache-dir", filepath.Join(work, "cache")}
	publish := func(step string) {
		t.Helper()
		if r := kbuild(t, work, nil, publishArgs...); r.code != 0 {
			t.Fatalf("%s: publish: %s", step, r)
		}
	}
	follow := func(step string) string {
		t.Helper()
		r := kbuild(t, work, nil, "repo", "follow", "--site", "site", "--public-key", idx+".pub", "--plain-http")
		if r.code != 0 {
			t.Fatalf("%s: repo follow: %s", step, r)
		}
		return r.stdout
	}
	promote := func(build string) {
		t.Helper()
		if r := kbuild(t, work, nil, "attest", "smart-proxy@3.14.0", "--build", build, "--result", "pass", "--env", "kubernetes=1.33,arch=amd64",
			"--sign-key", qa+".key", "--root", rootFile, "--site", "site"); r.code != 0 {
			t.Fatalf("attest build %s: %s", build, r)
		}
		if r := kbuild(t, work, nil, "promote", "smart-proxy@3.14.0", "--build", build, "--to", "testing", "--allow-new", "--root", rootFile, "--site", "site", "--sign-key", idx+".key"); r.code != 0 {
			t.Fatalf("promote build %s: %s", build, r)
		}
	}
	var followable, charts name.Repository
	selects := func(step, want, upstream string) {
		t.Helper()
		tags, err := remote.List(followable)
		if err != nil {
			t.Fatalf("%s: tags of %s: %v", step, followable, err)
		}
		if got, err := testenv.FluxSemver(tags, site.FollowRange); err != nil || got != want {
			t.Errorf("%s: Flux's ref.semver >=0.0.0-0 over %s (tags %v) picks %q (%v), want %s", step, followable, tags, got, err, want)
		}
		all, err := remote.List(charts)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := testenv.FluxSemver(all, site.FollowRange); got != upstream {
			t.Errorf("%s: over the chart repository %s it picks %q, want %s", step, charts, got, upstream)
		}
		// Helm resolves the same range over the same repository (the
		// catalog's helm upgrade --install … --version line).
		cmd := exec.Command(helm, "show", "chart", "oci://"+followable.String(), "--version", site.FollowRange, "--plain-http")
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "\nversion: "+want+"\n") {
			t.Errorf("%s: helm show chart --version %s over %s: %v\n%s; want version %s", step, site.FollowRange, followable, err, out, want)
		}
	}

	publish("build 1")
	promote("1")
	out := follow("build 1 promoted")
	m := regexp.MustCompile(`(?m)^testing: copied oci://(\S+/suites/testing/smart-proxy):3\.14\.0-1$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("repo follow did not copy smart-proxy 3.14.0-1 into testing's followable repository:\n%s", out)
	}
	if followable, err = name.NewRepository(m[1], name.Insecure); err != nil {
		t.Fatal(err)
	}
	if charts, err = name.NewRepository(strings.Replace(m[1], "/suites/testing/", "/", 1), name.Insecure); err != nil {
		t.Fatal(err)
	}
	first, err := remote.Head(followable.Tag("3.14.0-1"))
	if err != nil {
		t.Fatal(err)
	}
	if o, err := cosignVerify(t, idx+".pub", followable.Digest(first.Digest.String()).String()); err != nil {
		t.Errorf("cosign verify of the followed chart: %v\n%s", err, o)
	}
	selects("before the promotion", "3.14.0-1", "3.14.0-1")

	// Build 2: published into unstable, not yet in testing.
	recipe := filepath.Join(work, "recipes", "smart-proxy", "recipe.yaml")
	data := readFile(t, recipe)
	if !strings.Contains(data, "\n  build: 1\n") {
		t.Fatalf("%s does not say build: 1", recipe)
	}
	os.WriteFile(recipe, []byte(strings.Replace(data, "\n  build: 1\n", "\n  build: 2\n", 1)), 0o644)
	publish("build 2")
	follow("build 2 published")
	selects("build 2 published into unstable", "3.14.0-1", "3.14.0-2")

	promote("2")
	if out := follow("build 2 promoted"); !strings.Contains(out, "testing: copied oci://"+followable.String()+":3.14.0-2") {
		t.Errorf("repo follow after the promotion of build 2:\n%s", out)
	}
	selects("after the promotion", "3.14.0-2", "3.14.0-2")

	if r := kbuild(t, work, nil, "repo", "withdraw", "smart-proxy@3.14.0", "--build", "2", "--reason", "breaks upgrades", "--sign-key", idx+".key", "--site", "site"); r.code != 0 {
		t.Fatalf("withdraw: %s", r)
	}
	if out := follow("build 2 withdrawn"); !strings.Contains(out, "testing: deleted oci://"+followable.String()+":3.14.0-2 (not in the suite)") {
		t.Errorf("repo follow after the withdrawal:\n%s", out)
	}
	selects("after the withdrawal", "3.14.0-1", "3.14.0-2")

	// The weekly run (scripts/publish.sh publish): nothing new; unstable is
	// re-signed by publish, testing by repo index over itself; nothing
	// moves.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	before := readFile(t, filepath.Join(work, "site", "testing", "index.yaml"))
	publish("weekly re-signing")
	testing := filepath.Join("site", "testing", "index.yaml")
	if r := kbuild(t, work, []string{"SOURCE_DATE_EPOCH=" + strconv.FormatInt(time.Now().Unix(), 10)}, "repo", "index", t.TempDir(), "-o", testing, "--index", testing, "--index-root", rootFile, "--sign-key", idx+".key"); r.code != 0 {
		t.Fatalf("re-signing testing: %s", r)
	}
	if readFile(t, filepath.Join(work, testing)) == before {
		t.Error("the weekly run did not re-sign testing")
	}
	if out := follow("weekly re-signing"); !strings.Contains(out, "testing: 0 copied, 0 deleted, 1 already in place") {
		t.Errorf("repo follow after the weekly re-signing:\n%s", out)
	}
	selects("after the weekly re-signing", "3.14.0-1", "3.14.0-2")
	if now, err := remote.Head(followable.Tag("3.14.0-1")); err != nil || now.Digest != first.Digest {
		t.Errorf("the followable 3.14.0-1 is %v (%v), want its first digest %s", now, err, first.Digest)
	}
	if o, err := cosignVerify(t, idx+".pub", followable.Tag("3.14.0-1").String()); err != nil {
		t.Errorf("cosign verify of the followed chart after the withdrawal and the re-signing: %v\n%s", err, o)
	}
	// What is deployed holds no publish lock: publish into a suite and the
	// site root (rootSuite), attest, promote, withdraw and the re-signing
	// each locked a directory of it.
	noLock(t, filepath.Join(work, "site"))
}

// noLock fails t for each file under site that is a publish lock
// (.kbuild-publish.lock, or any name with "lock" in it).
func noLock(t *testing.T, site string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(site, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n++
		if strings.Contains(strings.ToLower(d.Name()), "lock") {
			t.Errorf("the site holds %s; the publish lock must stay outside it", p)
		}
		return nil
	})
	if err != nil || n < 10 {
		t.Fatalf("walked %d files of %s: %v", n, site, err)
	}
}
