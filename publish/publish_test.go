package publish

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	sigsyaml "sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/sources"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// fixture is a work directory with recipes, a key and a registry path on
// a registry: go-containerregistry's in-process registry (newFixture), the
// real registry process (newE2EFixture), or none (newLayoutFixture).
type fixture struct {
	t        *testing.T
	work     string
	registry string // oci://HOST:PORT/PATH, unique to the test; "" for the local layout
	key      *trust.PrivateKey
	epoch    time.Time
	stdout   bytes.Buffer
	stderr   bytes.Buffer
}

// newFixture returns a fixture on go-containerregistry's in-process
// registry (on loopback, spoken to in plain HTTP as the real one is): for
// the tests of publish's own logic.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return fixtureOn(t, strings.TrimPrefix(srv.URL, "http://"))
}

// newE2EFixture returns a fixture on the real registry process
// (KBUILD_TEST_REGISTRY): for the end-to-end tests, which judge publish
// with real clients (cosign) and real faults.
func newE2EFixture(t *testing.T) *fixture {
	t.Helper()
	return fixtureOn(t, testenv.Registry(t))
}

// fixtureOn returns a fixture on the registry at reg (host:port), under a
// path of its own.
func fixtureOn(t *testing.T, reg string) *fixture {
	t.Helper()
	b := make([]byte, 4)
	rand.Read(b)
	f := newLayoutFixture(t)
	f.registry = "oci://" + reg + "/p" + hex.EncodeToString(b)
	return f
}

// newLayoutFixture returns a fixture that pushes into the local OCI layout
// WORK/dist/oci, as kbuild publish does without --registry: it needs no
// registry.
func newLayoutFixture(t *testing.T) *fixture {
	t.Helper()
	k, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, work: t.TempDir(), key: k, epoch: time.Now().Add(-time.Hour).UTC().Truncate(time.Second)}
}

// recipe writes recipes/NAME: a chart of one ConfigMap at version v build n.
func (f *fixture) recipe(pkg, v string, n int) {
	f.t.Helper()
	dir := filepath.Join(f.work, "recipes", pkg)
	files := map[string]string{
		"recipe.yaml": fmt.Sprintf(`apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: %[1]s
  annotations: {kubepkg.dev/description: "the %[1]s package"}
spec:
  version: %[2]s
  build: %[3]d
  sources:
    chart: {dir: chart}
  charts:
    %[1]s: {from: [chart]}
  package:
    rollback: {safe: true}
    variants:
      - name: default
        components: [{name: %[1]s, path: %[1]s}]
`, pkg, v, n),
		"chart/Chart.yaml":        "apiVersion: v2\nname: " + pkg + "\nversion: 0.1.0\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + pkg + "}\ndata: {v: \"" + v + "\"}\n",
	}
	for p, c := range files {
		p = filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
}

// publisher returns a Publisher over the fixture's recipes into site;
// wrap, when given, wraps the registry target.
func (f *fixture) publisher(site string, wrap func(oci.Target) oci.Target, extra ...Option) *Publisher {
	f.t.Helper()
	f.stdout.Reset()
	f.stderr.Reset()
	p, err := testPublisher(f.work, f.registry, f.key, f.epoch, site, wrap, &f.stdout, &f.stderr, extra...)
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

// testPublisher returns a Publisher of the recipes under work/recipes
// into work/site, pushing to registry (plain HTTP), or into the local
// layout work/dist/oci when registry is "", built at epoch.
func testPublisher(work, registry string, key *trust.PrivateKey, epoch time.Time, site string, wrap func(oci.Target) oci.Target, stdout, stderr io.Writer, extra ...Option) (*Publisher, error) {
	var t oci.Target
	var err error
	if registry == "" {
		t, err = oci.NewLayoutTarget(filepath.Join(work, "dist", "oci"), "")
	} else {
		t, err = oci.NewRegistryTarget(registry, true)
	}
	if err != nil {
		return nil, err
	}
	if wrap != nil {
		t = wrap(t)
	}
	fetch, err := sources.New(sources.WithCacheDir(filepath.Join(work, "cache")), sources.WithPlainHTTP(true))
	if err != nil {
		return nil, err
	}
	distDir := filepath.Join(work, "dist")
	b, err := builder.New(fetch, t, builder.WithOutputDir(distDir), builder.WithEpoch(epoch), builder.WithJobs(2), builder.WithRecipesRoot(filepath.Join(work, "recipes")))
	if err != nil {
		return nil, err
	}
	opts := []Option{WithSite(filepath.Join(work, site)), WithSigners(key), WithGenerated(epoch),
		WithBuilder(b), WithTarget(t), WithDist(distDir), WithFetcher(fetch), WithPlainHTTP(true), WithProvenance("kbuild", "test", epoch, func(string) string { return "" }),
		WithOutput(stdout, stderr)}
	return New(append(opts, extra...)...)
}

func (f *fixture) publish(site string, wrap func(oci.Target) oci.Target, extra ...Option) (*Result, error) {
	return f.publisher(site, wrap, extra...).Publish(context.Background(), filepath.Join(f.work, "recipes"))
}

// verified reads and verifies the index of site as a subscriber does.
func (f *fixture) verified(site string) *index.RepositoryIndex {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join(f.work, site, sitelayout.IndexFile))
	if err != nil {
		f.t.Fatal(err)
	}
	sig, err := os.ReadFile(filepath.Join(f.work, site, sitelayout.SignatureFile))
	if err != nil {
		f.t.Fatal(err)
	}
	v, err := trust.Verify(data, sig, &trust.Trust{IndexKeys: []*trust.PublicKey{f.key.Public()}}, trust.VerifyOptions{Now: time.Now()})
	if err != nil {
		f.t.Fatalf("the published index does not verify: %v", err)
	}
	// The signature by digest is the same file.
	byHash, err := os.ReadFile(filepath.Join(f.work, site, filepath.FromSlash(sitelayout.ByHashSignatureFile(data))))
	if err != nil || !bytes.Equal(byHash, sig) {
		f.t.Errorf("%s: %v; it must equal index.yaml.sig", sitelayout.ByHashSignatureFile(data), err)
	}
	return v.Index
}

// checkPullable fails unless every chart x pins is in the registry with
// the manifest the site's build info names.
func (f *fixture) checkPullable(x *index.RepositoryIndex) {
	f.t.Helper()
	for pkg, p := range x.Packages {
		for _, v := range p.Versions {
			for _, va := range v.Spec.Variants {
				for _, c := range va.Components {
					ref, err := name.NewTag(strings.TrimPrefix(c.Chart.Repository, "oci://")+"/"+c.Chart.Name+":"+strings.ReplaceAll(c.Chart.Version, "+", "_"), name.Insecure)
					if err != nil {
						f.t.Fatal(err)
					}
					if _, err := remote.Head(ref); err != nil {
						f.t.Errorf("%s %s build %d: the index pins %s, which the registry does not have: %v", pkg, v.Version, v.Build, ref, err)
					}
				}
			}
		}
	}
}

// testRecord is the build record of name at version build 1 with one
// chart in repository.
func testRecord(name, version, repository string) *spec.PackageSource {
	return record(name, version, 1, repository, "sha256:"+strings.Repeat("a", 64))
}

// record is the build record of name at version build with one chart in
// repository, of archive digest.
func record(name, version string, build int, repository, digest string) *spec.PackageSource {
	return &spec.PackageSource{APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind,
		Metadata: spec.RecordMetadata{Name: name, Annotations: map[string]string{index.DescriptionAnnotation: "The " + name + " package"}},
		Spec: spec.PackageSpec{Version: version, Build: build, Variants: []spec.Variant{{Name: "default", Components: []spec.Component{{Name: name,
			Chart: &spec.ChartRef{Repository: repository, Name: name, Version: fmt.Sprintf("%s-%d", version, build), Digest: digest}}}}}}}
}

// writeRecord writes rec into distDir as kbuild build names it and
// returns the file.
func writeRecord(t *testing.T, distDir string, rec *spec.PackageSource) string {
	t.Helper()
	data, err := index.MarshalRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(distDir, fmt.Sprintf("%s-%s-%d.yaml", rec.Metadata.Name, rec.Spec.Version, rec.Spec.Build))
	if err := os.MkdirAll(distDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func versionsOf(x *index.RepositoryIndex) []string {
	var out []string
	for pkg, p := range x.Packages {
		for _, v := range p.Versions {
			out = append(out, fmt.Sprintf("%s@%s-%d", pkg, v.Version, v.Build))
		}
	}
	return out
}

// TestPublishSignsOnlyWhatItPushed leaves a record in dist/ that points at
// a chart never pushed (as a developer's old dist/ does): publish warns
// about it and signs only the version it built, whose chart the registry
// has.
func TestPublishSignsOnlyWhatItPushed(t *testing.T) {
	f := newFixture(t)
	f.recipe("alpha", "1.0.0", 1)
	stale := writeRecord(t, filepath.Join(f.work, "dist"), testRecord("ghost", "9.9.9", "oci://127.0.0.1:8080/ghost"))

	res, err := f.publish("site", nil)
	if err != nil {
		t.Fatalf("publish: %v\n%s%s", err, f.stdout.String(), f.stderr.String())
	}
	if res.Packages != 1 || res.Versions != 1 {
		t.Errorf("signed %d packages, %d versions; want only alpha", res.Packages, res.Versions)
	}
	if !strings.Contains(f.stderr.String(), "warning: "+stale+": not built by this publish and not in the published index; ignored, not signed") {
		t.Errorf("no warning about the stale record: %s", f.stderr.String())
	}
	x := f.verified("site")
	if got := versionsOf(x); len(got) != 1 || got[0] != "alpha@1.0.0-1" {
		t.Errorf("the signed index holds %v, want [alpha@1.0.0-1]", got)
	}
	f.checkPullable(x)
}

// dropPushes is a target whose pushes of charts succeed without storing
// anything: what a registry that loses a write looks like to a client.
type dropPushes struct{ oci.Target }

func (dropPushes) Push(context.Context, string, string, v1.Image) error { return nil }

// TestPublishConfirmsManifests: a chart that the registry does not hold
// after its push is never signed; the index stays the previous one and a
// re-run with a working registry completes.
func TestPublishConfirmsManifests(t *testing.T) {
	f := newFixture(t)
	f.recipe("alpha", "1.0.0", 1)
	if _, err := f.publish("site", nil); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(f.work, "site", sitelayout.IndexFile))
	f.recipe("beta", "2.0.0", 1)
	_, err := f.publish("site", func(t oci.Target) oci.Target { return dropPushes{t} })
	if err == nil || !strings.Contains(err.Error(), "beta: chart "+strings.TrimPrefix(f.registry, "oci://")+"/beta/beta:2.0.0-1 is not in the registry although it was pushed; nothing was signed") {
		t.Fatalf("publish with lost pushes: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(f.work, "site", sitelayout.IndexFile)); !bytes.Equal(after, before) {
		t.Errorf("a failed publish changed index.yaml")
	}
	f.verified("site")
	if _, err := f.publish("site", nil); err != nil {
		t.Fatalf("re-run: %v", err)
	}
	x := f.verified("site")
	if len(versionsOf(x)) != 2 {
		t.Errorf("after the re-run the index holds %v", versionsOf(x))
	}
	f.checkPullable(x)
}

// TestPublishNothingNew: with every recipe published and no dist/ (a fresh
// CI checkout), publish succeeds and re-signs the same versions with a
// fresh expiry.
func TestPublishNothingNew(t *testing.T) {
	f := newFixture(t)
	f.recipe("alpha", "1.0.0", 1)
	if _, err := f.publish("site", nil); err != nil {
		t.Fatal(err)
	}
	first := f.verified("site")
	firstData, _ := os.ReadFile(filepath.Join(f.work, "site", sitelayout.IndexFile))
	os.RemoveAll(filepath.Join(f.work, "dist"))
	later := time.Now().Add(48 * time.Hour)
	now = func() time.Time { return later }
	defer func() { now = time.Now }()
	res, err := f.publish("site", nil)
	if err != nil {
		t.Fatalf("publish with nothing new and no dist/: %v", err)
	}
	if !strings.Contains(f.stdout.String(), "alpha: up to date (alpha 1.0.0 build 1 is published)") {
		t.Errorf("publish output: %s", f.stdout.String())
	}
	if res.Versions != 1 {
		t.Errorf("re-signed %d versions, want 1", res.Versions)
	}
	data, _ := os.ReadFile(filepath.Join(f.work, "site", sitelayout.IndexFile))
	x, err := index.ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := later.UTC().Truncate(time.Second).Add(30 * 24 * time.Hour); !x.Expires.Equal(want) || !x.Expires.After(first.Expires) {
		t.Errorf("expires %s after the re-sign (was %s), want %s", x.Expires, first.Expires, want)
	}
	if bytes.Equal(data, firstData) {
		t.Error("the index was not re-signed")
	}
	if got := versionsOf(f.verified("site")); len(got) != 1 || got[0] != "alpha@1.0.0-1" {
		t.Errorf("re-signed index holds %v", got)
	}
}

// TestPublishLocked: a publish to a site another publish holds fails at
// once and writes nothing.
func TestPublishLocked(t *testing.T) {
	f := newFixture(t)
	f.recipe("alpha", "1.0.0", 1)
	unlock, err := lockSite(filepath.Join(f.work, "site"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.publish("site", nil)
	unlock()
	if err == nil || !strings.Contains(err.Error(), "another publish is writing") {
		t.Fatalf("publish into a locked site: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.work, "site", sitelayout.IndexFile)); err == nil {
		t.Error("a refused publish wrote index.yaml")
	}
	if _, err := f.publish("site", nil); err != nil {
		t.Fatalf("publish after the lock is released: %v", err)
	}
	// The lock is outside the site: nothing of it is deployed.
	filepath.WalkDir(filepath.Join(f.work, "site"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), "lock") {
			t.Errorf("the site holds %s; the publish lock must stay outside it", p)
		}
		return nil
	})
}

// TestWithdraw withdraws one version: it leaves the signed index, its
// tombstone stays there and in the catalog, a publish of the same recipe
// skips it, a merge carries the tombstone, 'repo index' refuses its record,
// and a kubepkg-style lenient reader still reads the index.
func TestWithdraw(t *testing.T) {
	f := newFixture(t)
	f.recipe("alpha", "1.0.0", 1)
	f.recipe("beta", "1.1.0", 1)
	if _, err := f.publish("site", nil); err != nil {
		t.Fatal(err)
	}
	before := f.verified("site")
	digest := before.Packages["beta"].Versions[0].Digest
	ctx := context.Background()
	later := f.epoch.Add(time.Minute)
	p, err := New(WithSite(filepath.Join(f.work, "site")), WithSigners(f.key), WithGenerated(later), WithOutput(&f.stdout, &f.stderr))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Withdraw(ctx, "beta", "1.1.0", 2, "no such build"); err == nil || !strings.Contains(err.Error(), "beta 1.1.0 build 2 is not in the index; nothing to withdraw") {
		t.Errorf("withdrawing a version that is not published: %v", err)
	}
	w, res, err := p.Withdraw(ctx, "beta", "1.1.0", 1, "breaks upgrades from 1.0 (issue 7)")
	if err != nil {
		t.Fatal(err)
	}
	if w.Digest != digest || res.Versions != 1 {
		t.Errorf("tombstone %+v, %d versions left", w, res.Versions)
	}
	x := f.verified("site")
	if got := versionsOf(x); len(got) != 1 || got[0] != "alpha@1.0.0-1" {
		t.Errorf("after withdrawing, the index offers %v", got)
	}
	want := index.Withdrawal{Package: "beta", Version: "1.1.0", Build: 1, Digest: digest, Reason: "breaks upgrades from 1.0 (issue 7)", Withdrawn: later}
	if len(x.Withdrawn) != 1 || x.Withdrawn[0] != want {
		t.Errorf("withdrawn = %+v, want %+v", x.Withdrawn, want)
	}
	page, _ := os.ReadFile(filepath.Join(f.work, "site", "packages", "beta.html"))
	for _, s := range []string{"Withdrawn", "breaks upgrades from 1.0 (issue 7)", digest, "No published versions."} {
		if !strings.Contains(string(page), s) {
			t.Errorf("packages/beta.html lacks %q", s)
		}
	}
	if p, err = New(WithSite(filepath.Join(f.work, "site")), WithSigners(f.key), WithGenerated(later)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Withdraw(ctx, "beta", "1.1.0", 1, "again"); err == nil || !strings.Contains(err.Error(), "already withdrawn") {
		t.Errorf("withdrawing twice: %v", err)
	}

	// The recipe is unchanged: publish skips the withdrawn version.
	f.epoch = later
	if _, err := f.publish("site", nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.stdout.String(), "beta: withdrawn (beta 1.1.0 build 1: breaks upgrades from 1.0 (issue 7)); not built") {
		t.Errorf("publish output: %s", f.stdout.String())
	}
	if x := f.verified("site"); len(x.Withdrawn) != 1 || len(versionsOf(x)) != 1 {
		t.Errorf("after a publish: versions %v, withdrawn %v", versionsOf(x), x.Withdrawn)
	}

	// A merge into another site keeps the tombstone.
	trust := &trust.Trust{IndexKeys: []*trust.PublicKey{f.key.Public()}}
	if _, err := f.publish("site2", nil, WithMerge(filepath.Join(f.work, "site", sitelayout.IndexFile), trust, false)); err != nil {
		t.Fatal(err)
	}
	if x := f.verified("site2"); len(x.Withdrawn) != 1 || x.Withdrawn[0] != want {
		t.Errorf("merged index: withdrawn %+v", x.Withdrawn)
	}

	// repo index refuses the record of the withdrawn version.
	ip, err := New(WithSigners(f.key), WithGenerated(later), WithMerge(filepath.Join(f.work, "site", sitelayout.IndexFile), trust, false))
	if err != nil {
		t.Fatal(err)
	}
	_, err = ip.Index(ctx, filepath.Join(f.work, "dist"), filepath.Join(f.work, "site3", sitelayout.IndexFile))
	var we *index.WithdrawnError
	if !errors.As(err, &we) || !strings.Contains(err.Error(), "beta 1.1.0 build 1 was withdrawn on") {
		t.Errorf("repo index of a withdrawn record: %v", err)
	}

	// A kubepkg client decodes the index leniently and no longer sees the
	// version; the signature covers the tombstones too.
	data, _ := os.ReadFile(filepath.Join(f.work, "site", sitelayout.IndexFile))
	var kp struct {
		Kind     string `json:"kind"`
		Packages map[string]struct {
			Versions []struct {
				Version string `json:"version"`
				Build   int32  `json:"build,omitempty"`
				Digest  string `json:"digest"`
			} `json:"versions"`
		} `json:"packages"`
	}
	if err := sigsyaml.Unmarshal(data, &kp); err != nil {
		t.Fatalf("a lenient reader cannot read the index: %v", err)
	}
	if len(kp.Packages) != 1 || len(kp.Packages["alpha"].Versions) != 1 {
		t.Errorf("a lenient reader sees %+v", kp.Packages)
	}
}

// TestConcurrentPublish runs a second publish into the site while the
// first is between its pushes and its signing: the second fails at once,
// the first completes, and the site holds the first's index whole.
func TestConcurrentPublish(t *testing.T) {
	f := newE2EFixture(t)
	f.recipe("alpha", "1.0.0", 1)
	reached, release := make(chan struct{}), make(chan struct{})
	pauseAt = func(phase string) {
		if phase == "pushed" {
			close(reached)
			<-release
		}
	}
	defer func() { pauseAt = func(string) {} }()
	first := make(chan error, 1)
	p := f.publisher("site", nil)
	go func() {
		_, err := p.Publish(context.Background(), filepath.Join(f.work, "recipes"))
		first <- err
	}()
	<-reached
	var out bytes.Buffer
	second, err := testPublisher(f.work, f.registry, f.key, f.epoch, "site", nil, &out, &out)
	if err != nil {
		t.Fatal(err)
	}
	_, err = second.Publish(context.Background(), filepath.Join(f.work, "recipes"))
	close(release)
	if err == nil || !strings.Contains(err.Error(), "another publish is writing "+filepath.Join(f.work, "site")) {
		t.Errorf("the second publish: %v", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("the first publish: %v", err)
	}
	if got := versionsOf(f.verified("site")); len(got) != 1 {
		t.Errorf("index holds %v", got)
	}
}

// TestCommitCompareAndSwap: an index replaced by someone else after this
// publish read it is not overwritten (for sites the lock does not cover,
// such as one shared over NFS).
func TestCommitCompareAndSwap(t *testing.T) {
	dir := t.TempDir()
	k, _ := trust.GenerateKey(rand.Reader)
	path := filepath.Join(dir, sitelayout.IndexFile)
	os.WriteFile(path, []byte("the index this publish read\n"), 0o644)
	read, err := fileID(path)
	if err != nil {
		t.Fatal(err)
	}
	b := index.NewBuilder(index.Compact())
	if err := b.Add("r", testRecord("a", "1.0.0", "oci://r/a"), nil); err != nil {
		t.Fatal(err)
	}
	s, err := prepareSigned(path, b, time.Now(), time.Time{}, []trust.Signer{k})
	if err != nil {
		t.Fatal(err)
	}
	// Another publish renames its index into place.
	os.WriteFile(path+".other", []byte("another publish's index\n"), 0o644)
	os.Rename(path+".other", path)
	if err := s.commit(&read); err == nil || !strings.Contains(err.Error(), "changed while this publish ran") {
		t.Fatalf("commit over a changed index: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "another publish's index\n" {
		t.Errorf("the other publish's index was overwritten: %q", got)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}

// TestPublishAfterWithdrawKeepsTime: a withdrawal re-signs the index at
// now; a publish at an earlier SOURCE_DATE_EPOCH then keeps the base's
// generated time instead of going back (a rollback to subscribers).
func TestPublishAfterWithdrawKeepsTime(t *testing.T) {
	f := newFixture(t)
	f.recipe("alpha", "1.0.0", 1)
	f.recipe("beta", "1.0.0", 1)
	if _, err := f.publish("site", nil); err != nil {
		t.Fatal(err)
	}
	later := f.epoch.Add(30 * time.Minute)
	p, err := New(WithSite(filepath.Join(f.work, "site")), WithSigners(f.key), WithGenerated(later))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Withdraw(context.Background(), "beta", "1.0.0", 1, "bad"); err != nil {
		t.Fatal(err)
	}
	f.recipe("gamma", "1.0.0", 1)
	if _, err := f.publish("site", nil); err != nil {
		t.Fatalf("publish at the earlier epoch after a withdrawal: %v", err)
	}
	if x := f.verified("site"); !x.Generated.Equal(later) || len(versionsOf(x)) != 2 {
		t.Errorf("generated %s (want %s), versions %v", x.Generated, later, versionsOf(x))
	}
}

// TestIncrementalCatalog: the catalog a publish writes from summaries of
// the packages it did not change (index.html) and from the published
// versions it kept of those it did equals the catalog written from the
// whole index into an empty site.
func TestIncrementalCatalog(t *testing.T) {
	f := newFixture(t)
	fixed := time.Now().UTC().Truncate(time.Second)
	now = func() time.Time { return fixed }
	defer func() { now = time.Now }()
	f.recipe("alpha", "1.0.0", 1)
	f.recipe("beta", "1.0.0", 1)
	if _, err := f.publish("site", nil); err != nil {
		t.Fatal(err)
	}
	f.recipe("beta", "1.1.0", 1)
	if _, err := f.publish("site", nil); err != nil {
		t.Fatal(err)
	}
	// beta, now of two versions, leaves the recipes directory: the next
	// publish only summarizes it.
	os.RemoveAll(filepath.Join(f.work, "recipes", "beta"))
	f.recipe("alpha", "1.1.0", 1)
	if _, err := f.publish("site", nil); err != nil {
		t.Fatal(err)
	}
	trust := &trust.Trust{IndexKeys: []*trust.PublicKey{f.key.Public()}}
	if _, err := f.publish("fresh", nil, WithMerge(filepath.Join(f.work, "site", sitelayout.IndexFile), trust, false)); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"index.html", "packages/alpha.html", sitelayout.IndexFile, sitelayout.RepositoryBOMFile} {
		got, _ := os.ReadFile(filepath.Join(f.work, "site", file))
		want, err := os.ReadFile(filepath.Join(f.work, "fresh", file))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s of the incremental publish differs from the one written from the whole index (%v)", file, err)
		}
	}
	if page, _ := os.ReadFile(filepath.Join(f.work, "site", "index.html")); !strings.Contains(string(page), "beta") {
		t.Error("index.html lost the package it only summarized")
	}
}

// TestCatalogKeepsRootKeys: pages written without WithRoot — by a
// withdrawal, say — over a site that publishes a root chain keep pinning
// the root's keys, as the publish with the root wrote them.
func TestCatalogKeepsRootKeys(t *testing.T) {
	f := newLayoutFixture(t)
	f.recipe("alpha", "1.0.0", 1)
	f.recipe("beta", "1.1.0", 1)
	rootKey, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	root, err := trust.NewRoot(trust.RootConfig{Expires: f.epoch.AddDate(1, 0, 0), RootKeys: []*trust.PublicKey{rootKey.Public()}, RootThreshold: 1,
		IndexKeys: []*trust.PublicKey{f.key.Public()}, IndexThreshold: 1})
	if err != nil {
		t.Fatal(err)
	}
	root.Sign(rootKey)
	data, _ := root.Marshal()
	rootFile := filepath.Join(t.TempDir(), "root.yaml")
	if err := os.WriteFile(rootFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.publish("site", nil, WithRoot(rootFile)); err != nil {
		t.Fatal(err)
	}
	// A root whose chain is not beside it is an error about the root
	// input (the command names its flag).
	c, err := root.Config()
	if err != nil {
		t.Fatal(err)
	}
	next, err := root.Next(c)
	if err != nil {
		t.Fatal(err)
	}
	next.Sign(rootKey)
	data2, _ := next.Marshal()
	chainless := filepath.Join(t.TempDir(), "root.yaml")
	if err := os.WriteFile(chainless, data2, 0o644); err != nil {
		t.Fatal(err)
	}
	var ie *InputError
	if _, err := f.publish("chainless", nil, WithRoot(chainless)); !errors.As(err, &ie) || ie.Input != "root" || !strings.Contains(err.Error(), chainless+" is version 2, and its chain needs") {
		t.Errorf("publish with a root without its chain = %v, want an InputError about the root", err)
	}
	// The base64 line of each key's PEM.
	body := func(pem []byte) string { return strings.Split(strings.TrimSpace(string(pem)), "\n")[1] }
	rootB64, indexB64 := body(rootKey.Public().PEM()), body(f.key.Public().PEM())
	pinsRoot := func(when string, files ...string) {
		t.Helper()
		for _, file := range files {
			b, err := os.ReadFile(filepath.Join(f.work, "site", filepath.FromSlash(file)))
			if err != nil {
				t.Fatal(err)
			}
			page := html.UnescapeString(string(b)) // html/template writes + as &#43;
			if !strings.Contains(page, "rootKeys:") || !strings.Contains(page, rootB64) || strings.Contains(page, indexB64) {
				t.Errorf("%s: %s does not pin the root key alone", when, file)
			}
		}
	}
	pinsRoot("after the publish with the root", "index.html", "packages/beta.html")
	p, err := New(WithSite(filepath.Join(f.work, "site")), WithSigners(f.key), WithGenerated(f.epoch.Add(time.Minute)), WithOutput(&f.stdout, &f.stderr))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Withdraw(context.Background(), "beta", "1.1.0", 1, "broken"); err != nil {
		t.Fatal(err)
	}
	// The withdrawal rewrites the catalog's front page and beta's page,
	// which has no version left to subscribe to.
	pinsRoot("after a withdrawal without the root", "index.html")
	if b, _ := os.ReadFile(filepath.Join(f.work, "site", "packages", "beta.html")); strings.Contains(html.UnescapeString(string(b)), indexB64) {
		t.Error("after a withdrawal without the root, packages/beta.html pins the signing key")
	}
}

// TestPublishWithAnySigner publishes, and publishes again over the first
// site, with a Signer that is not a *trust.PrivateKey (as a KMS-backed key
// is): the keys, catalog and base verification take its public half from
// the Signer itself.
func TestPublishWithAnySigner(t *testing.T) {
	f := newLayoutFixture(t)
	f.recipe("alpha", "1.0.0", 1)
	kms := WithSigners(wrappedKey{f.key})
	if _, err := f.publish("site", nil, kms); err != nil {
		t.Fatal(err)
	}
	f.recipe("beta", "1.0.0", 1)
	if _, err := f.publish("site", nil, kms); err != nil {
		t.Fatalf("second publish over the first: %v", err)
	}
	if got := versionsOf(f.verified("site")); len(got) != 2 {
		t.Errorf("the index holds %v, want alpha and beta", got)
	}
	pub, err := os.ReadFile(filepath.Join(f.work, "site", sitelayout.KeyFile(f.key.KeyID())))
	if err != nil || !bytes.Equal(pub, f.key.Public().PEM()) {
		t.Errorf("%s: %v; want the signer's public key", sitelayout.KeyFile(f.key.KeyID()), err)
	}
}

// TestPublishRefusesChangedRecipe: a recipe changed since its version and
// build were published (here it gains a capability a release set needs)
// is refused, naming the field and saying to bump spec.build, rather
// than reported up to date while the old spec stays published; nothing
// is written. With the build bumped it publishes.
func TestPublishRefusesChangedRecipe(t *testing.T) {
	f := newLayoutFixture(t)
	f.recipe("alpha", "1.0.0", 1)
	if _, err := f.publish("site", nil); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(f.work, "site", sitelayout.IndexFile))
	file := filepath.Join(f.work, "recipes", "alpha", "recipe.yaml")
	data, _ := os.ReadFile(file)
	changed := strings.Replace(string(data), "    rollback: {safe: true}\n", "    rollback: {safe: true}\n    provides: [\"build:alpha@1.0.0+build.1\"]\n", 1)
	if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := f.publish("site", nil)
	want := `alpha 1.0.0 build 1 is published with spec.provides absent, the recipe now says ["build:alpha@1.0.0+build.1"]; published versions never change (kubepkg clients keep the published spec), so bump spec.build`
	if !errors.Is(err, builder.ErrSpecChanged) || !strings.Contains(err.Error(), want) {
		t.Fatalf("publish of a changed recipe = %v\nwant %q", err, want)
	}
	if strings.Contains(f.stdout.String(), "up to date") {
		t.Errorf("a changed recipe was reported up to date: %s", f.stdout.String())
	}
	if after, _ := os.ReadFile(filepath.Join(f.work, "site", sitelayout.IndexFile)); !bytes.Equal(after, before) {
		t.Error("a refused publish changed index.yaml")
	}
	f.recipe("alpha", "1.0.0", 2)
	if err := os.WriteFile(file, []byte(strings.Replace(strings.Replace(changed, "build: 1\n", "build: 2\n", 1), "+build.1", "+build.2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.publish("site", nil); err != nil {
		t.Fatalf("publish with the build bumped: %v", err)
	}
}
