package suite

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/stacktest"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/site"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

var gen = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)

type repo struct {
	t                *testing.T
	site, rootFile   string
	cfg              *Config
	rootKey, idx, qa *trust.PrivateKey
	stranger         *trust.PrivateKey
	root             *trust.Root
	x                *index.RepositoryIndex // the unstable suite's index
}

func key(t *testing.T) *trust.PrivateKey {
	k, err := trust.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// newRepo publishes the records into the unstable suite of a new site
// under a root with a qa role, as 'kbuild repo index' and 'kbuild trust
// root new' write them.
func newRepo(t *testing.T, records ...string) *repo {
	return newRepoDist(t, stacktest.CopyDist(t, records...))
}

// newRepoDist is newRepo over the build records in dist.
func newRepoDist(t *testing.T, dist string) *repo {
	r := &repo{t: t, site: t.TempDir(), rootKey: key(t), idx: key(t), qa: key(t), stranger: key(t)}
	var err error
	if r.cfg, _, err = Load("testdata/suites.yaml"); err != nil {
		t.Fatal(err)
	}
	r.root, err = trust.NewRoot(trust.RootConfig{Expires: gen.AddDate(1, 0, 0), RootKeys: []*trust.PublicKey{r.rootKey.Public()}, RootThreshold: 1,
		IndexKeys: []*trust.PublicKey{r.idx.Public()}, IndexThreshold: 1, QAKeys: []*trust.PublicKey{r.qa.Public()}, QAThreshold: 1})
	if err != nil {
		t.Fatal(err)
	}
	r.root.Sign(r.rootKey)
	data, _ := r.root.Marshal()
	r.rootFile = filepath.Join(t.TempDir(), "root.yaml")
	for _, f := range []string{r.rootFile, filepath.Join(filepath.Dir(r.rootFile), "root", "1.yaml"), filepath.Join(r.site, "unstable", "root.yaml"), filepath.Join(r.site, "unstable", "root", "1.yaml")} {
		os.MkdirAll(filepath.Dir(f), 0o755)
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := publish.New(publish.WithSigners(r.idx), publish.WithGenerated(gen.Add(-time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Index(context.Background(), dist, filepath.Join(r.site, "unstable", "index.yaml")); err != nil {
		t.Fatal(err)
	}
	r.x = r.read("unstable").Verified.Index
	return r
}

// read verifies a suite's index as a kubepkg subscriber does: from the
// pinned root key through the root chain published beside it, at a
// reference time after every index the tests write (the latest, a
// withdrawal, is generated an hour after gen), never at the clock.
func (r *repo) read(suite string) *siteread.Published {
	r.t.Helper()
	p, err := siteread.ReadIndexAt(context.Background(), filepath.Join(r.site, suite), &trust.Trust{RootKeys: []*trust.PublicKey{r.rootKey.Public()}}, gen.Add(2*time.Hour))
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

func (r *repo) attest(x *index.RepositoryIndex, target evidence.Target, result, env string, expires time.Time, signer trust.Signer) {
	r.t.Helper()
	e, err := evidence.ParseEnv(env)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := WriteEvidence(r.site, target, e, r.envelope(x, target, result, env, expires, signer)); err != nil {
		r.t.Fatal(err)
	}
}

// envelope is signed evidence of target in env, about the digests x pins.
func (r *repo) envelope(x *index.RepositoryIndex, target evidence.Target, result, env string, expires time.Time, signer trust.Signer) []byte {
	r.t.Helper()
	subjects, err := evidence.Subjects(x, target)
	if err != nil {
		r.t.Fatal(err)
	}
	e, err := evidence.ParseEnv(env)
	if err != nil {
		r.t.Fatal(err)
	}
	var passed, failed []string
	if result == evidence.Pass {
		passed = []string{"install", "rollback", "upgrade"}
	} else {
		failed = []string{"upgrade"}
	}
	s, err := evidence.New(evidence.Attestation{Target: target, Result: result, Env: e, Issued: gen.Add(-time.Hour), Expires: expires, Passed: passed, Failed: failed}, subjects)
	if err != nil {
		r.t.Fatal(err)
	}
	env2, err := evidence.Sign(s, signer)
	if err != nil {
		r.t.Fatal(err)
	}
	return env2
}

func (r *repo) promote(to string, target evidence.Target, now time.Time) (*Outcome, error) {
	return Promote(context.Background(), Promotion{Site: r.site, Config: r.cfg, To: to, Target: target, Root: r.rootFile,
		Signers: []trust.Signer{r.idx}, Generated: gen, Now: now, AllowNew: true})
}

// badges checks that suite's page of foreman has each of want.
func (r *repo) badges(suite string, want ...string) {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join(r.site, suite, "packages", "foreman.html"))
	if err != nil {
		r.t.Fatal(err)
	}
	for _, w := range want {
		if !bytes.Contains(data, []byte(w)) {
			r.t.Errorf("%s/packages/foreman.html lacks %s", suite, w)
		}
	}
}

// entry returns the text of the entry with digest in the index file.
func entry(t *testing.T, file, digest string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cur, found []string
	flush := func() {
		for _, l := range cur {
			if l == "      digest: "+digest {
				found = cur
			}
		}
	}
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "    - build: "):
			flush()
			cur = []string{l}
		case strings.HasPrefix(l, "      ") && cur != nil:
			cur = append(cur, l)
		default:
			flush()
			cur = nil
		}
	}
	if found == nil {
		t.Fatalf("%s has no entry with digest %s", file, digest)
	}
	return strings.Join(found, "\n")
}

var (
	foreman = evidence.Target{Package: "foreman", Version: "3.15.0", Build: 1}
	stack   = evidence.Target{Package: "foreman-stack", Version: "3.15.0", Build: 1}
	all     = []string{"foreman-3.15.0-1", "pulp-3.73.0-1", "candlepin-4.6.0-1", "smart-proxy-3.15.0-1", "foreman-stack-3.15.0-1", "foreman-stack-3.15.0-3"}
)

// TestPromote moves foreman from unstable to testing and stable: each
// step only with the evidence its policy needs, the entry byte-identical
// in every suite, each suite verified as a kubepkg subscriber verifies.
func TestPromote(t *testing.T) {
	r := newRepo(t, all...)
	late := gen.AddDate(0, 3, 0)
	r.attest(r.x, foreman, evidence.Pass, "kubernetes=1.33,arch=amd64,runtime=containerd", late, r.qa)
	if _, err := Promote(context.Background(), Promotion{Site: r.site, Config: r.cfg, To: "testing", Target: foreman, Root: r.rootFile,
		Signers: []trust.Signer{r.idx}, Generated: gen, Now: gen}); !errors.Is(err, ErrRefused) || !errors.Is(err, ErrNoSuiteIndex) || !strings.Contains(err.Error(), "testing/index.yaml does not exist: the suite has no index yet") {
		t.Fatalf("a first promotion without AllowNew: %v", err)
	}
	out, err := r.promote("testing", foreman, gen)
	if err != nil {
		t.Fatal(err)
	}
	if out.From != "unstable" || len(out.Copied) != 1 || out.Copied[0].String() != "foreman 3.15.0 build 1" || len(out.Evidence) != 1 {
		t.Fatalf("outcome = %+v", out)
	}
	testing := r.read("testing").Verified.Index
	if _, v := testing.Counts(); v != 1 {
		t.Fatalf("testing holds %d versions, want 1", v)
	}
	d := r.x.Packages["foreman"].Versions[0].Digest
	if a, b := entry(t, filepath.Join(r.site, "unstable", "index.yaml"), d), entry(t, filepath.Join(r.site, "testing", "index.yaml"), d); a != b {
		t.Fatalf("the promoted entry differs:\n%s\n---\n%s", a, b)
	}
	// Both suites' pages of foreman say the build is in both.
	if len(out.Refreshed) != 1 || out.Refreshed[0] != "unstable" {
		t.Errorf("refreshed %v, want the unstable suite's pages", out.Refreshed)
	}
	r.badges("unstable", `<a href="../../testing/packages/foreman.html#v3.15.0-1">testing</a>`, `<span class="badge suite">unstable</span>`)
	r.badges("testing", `<a href="../../unstable/packages/foreman.html#v3.15.0-1">unstable</a>`, `<span class="badge suite">testing</span>`)
	// stable needs two minors, amd64 and arm64, with containerd.
	_, err = r.promote("stable", foreman, gen)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "foreman 3.15.0 build 1 does not meet the policy (pass on >= 2 Kubernetes minor versions and on amd64 and arm64 with runtime=containerd, passing install, upgrade, rollback, signed by qa): passes on 1 Kubernetes minor version(s) (1.33), needs 2; no pass on arm64") {
		t.Fatalf("stable with one environment: %v", err)
	}
	r.attest(r.x, foreman, evidence.Pass, "kubernetes=1.34.1,arch=arm64,runtime=containerd", late, r.qa)
	r.attest(r.x, foreman, evidence.Pass, "kubernetes=1.32,arch=arm64,runtime=cri-o", late, r.qa) // not containerd: does not count
	if _, err := r.promote("stable", foreman, gen); err != nil {
		t.Fatal(err)
	}
	if a, b := entry(t, filepath.Join(r.site, "unstable", "index.yaml"), d), entry(t, filepath.Join(r.site, "stable", "index.yaml"), d); a != b {
		t.Fatal("the entry in stable differs from unstable's")
	}
	for _, s := range []string{"unstable", "testing"} {
		r.badges(s, `<a href="../../stable/packages/foreman.html#v3.15.0-1">stable</a>`)
	}
	r.badges("stable", `>unstable</a>`, `>testing</a>`, `<span class="badge suite">stable</span>`)
	// Promoting again changes nothing but the signature's time.
	if out, err := r.promote("testing", foreman, gen.Add(time.Minute)); err != nil || len(out.Copied) != 0 {
		t.Fatalf("promoting again: %+v, %v", out, err)
	}
}

// TestPromoteSet moves a release set with every member, one evidence for
// the set covering all their digests.
func TestPromoteSet(t *testing.T) {
	r := newRepo(t, all...)
	r.attest(r.x, stack, evidence.Pass, "kubernetes=1.33,arch=amd64", gen.AddDate(0, 1, 0), r.qa)
	out, err := r.promote("testing", stack, gen)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range out.Copied {
		got = append(got, c.Package)
	}
	if strings.Join(got, ",") != "foreman-stack,candlepin,foreman,pulp,smart-proxy" {
		t.Fatalf("copied %v", got)
	}
	x := r.read("testing").Verified.Index
	if _, v := x.Counts(); v != 5 {
		t.Fatalf("testing holds %d versions, want the set and its 4 members", v)
	}
	// The set digest is recorded in both suites, the same.
	if len(x.Sets) != 1 || len(r.x.Sets) != 1 || x.Sets[0].Digest != r.x.Sets[0].Digest || x.Sets[0].Package != "foreman-stack" {
		t.Fatalf("sets: testing %+v, unstable %+v", x.Sets, r.x.Sets)
	}
	// Last, the set's compatibility matrix, from the suites as they now
	// are: it says the set is in testing.
	matrix := filepath.Join(r.site, filepath.FromSlash(site.CompatPath("foreman-stack")))
	if data, err := os.ReadFile(matrix); err != nil || !slices.Contains(out.Matrices, matrix) || !bytes.Contains(data, []byte("testing")) {
		t.Fatalf("Promote wrote matrices %v (%v); want %s, naming testing", out.Matrices, err, matrix)
	}
}

func TestPromoteRefuses(t *testing.T) {
	r := newRepo(t, all...)
	late := gen.AddDate(0, 1, 0)
	env := "kubernetes=1.33,arch=amd64"
	pulp := evidence.Target{Package: "pulp", Version: "3.73.0", Build: 1}
	candlepin := evidence.Target{Package: "candlepin", Version: "4.6.0", Build: 1}
	smartProxy := evidence.Target{Package: "smart-proxy", Version: "3.15.0", Build: 1}
	// Evidence for pulp made against an index pinning another chart digest.
	other := stacktest.Index(t, "pulp-3.73.0-1")
	other.Packages["pulp"].Versions[0].Spec.Variants[0].Components[0].Chart.Digest = "sha256:" + strings.Repeat("ab", 32)
	r.attest(other, pulp, evidence.Pass, env, late, r.qa)
	r.attest(r.x, candlepin, evidence.Pass, env, late, r.idx)                       // the index key, not qa
	r.attest(r.x, smartProxy, evidence.Pass, env, gen.Add(time.Minute), r.qa)       // expires soon
	r.attest(r.x, foreman, evidence.Pass, env, late, r.qa)                          // a pass on amd64 …
	r.attest(r.x, foreman, evidence.Fail, "kubernetes=1.34,arch=amd64", late, r.qa) // … and a failure
	for _, tc := range []struct {
		name   string
		to     string
		target evidence.Target
		now    time.Time
		want   string
	}{
		{"no evidence", "testing", stack, gen, "no evidence for foreman-stack 3.15.0 build 1 under " + filepath.Join(r.site, "evidence", "foreman-stack-3.15.0-1") + "; testing needs evidence"},
		{"evidence for other digests", "testing", pulp, gen, "subject oci://registry.example/pulp/pulp:3.73.0-1: the evidence has sha256:abab"},
		{"signed outside the qa role", "testing", candlepin, gen, "signed by 0 of the qa role's keys in root version 1, which needs 1; signatures by keys outside the role (or invalid): " + r.idx.KeyID()[:12]},
		{"expired", "testing", smartProxy, gen.Add(time.Hour), "expired on 2026-11-02T00:01:00Z"},
		{"a fail result", "testing", foreman, gen, "foreman 3.15.0 build 1 failed its tests on arch=amd64,kubernetes=1.34; a failure blocks promotion"},
		{"a set with a missing member", "testing", evidence.Target{Package: "foreman-stack", Version: "3.15.0", Build: 3}, gen, "member candlepin 4.6.0 build 9 is not in the index"},
		{"into the first suite", "unstable", foreman, gen, "unstable is the first suite: publish puts new builds there, and promote moves them on to testing, then stable"},
		{"into an unknown suite", "sid", foreman, gen, `suite "sid" is not in suites.yaml (suites: unstable, testing, stable)`},
		{"skipping a suite", "stable", foreman, gen, "suite testing has no index yet; versions enter stable only from testing, so promote into testing first"},
		{"a version the suite lacks", "testing", evidence.Target{Package: "foreman", Version: "3.15.0", Build: 2}, gen, "foreman 3.15.0 build 2 is not in suite unstable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.promote(tc.to, tc.target, tc.now)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Promote = %v\nwant %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(r.site, "testing", "index.yaml")); err == nil {
				t.Fatal("a refused promotion wrote the testing suite")
			}
		})
	}
}

// TestPromoteRoot: every suite is under the one root; a suite whose
// published chain skips a root version is refused, and a root without a
// qa role lets no evidence count.
func TestPromoteRoot(t *testing.T) {
	r := newRepo(t, all...)
	r.attest(r.x, foreman, evidence.Pass, "kubernetes=1.33,arch=amd64", gen.AddDate(0, 1, 0), r.qa)
	c, _ := r.root.Config()
	next, err := r.root.Next(c)
	if err != nil {
		t.Fatal(err)
	}
	next.Sign(r.rootKey)
	data, _ := next.Marshal()
	// The repository's root is version 2, the suite still publishes 1.
	os.WriteFile(r.rootFile, data, 0o644)
	os.WriteFile(filepath.Join(filepath.Dir(r.rootFile), "root", "2.yaml"), data, 0o644)
	if _, err := r.promote("testing", foreman, gen); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "suite unstable is signed under root version 1, but the root is version 2") {
		t.Fatalf("a suite behind the root: %v", err)
	}
	// The suite publishes root.yaml version 2 but skips root/2.yaml.
	os.WriteFile(filepath.Join(r.site, "unstable", "root.yaml"), data, 0o644)
	if _, err := r.promote("testing", foreman, gen); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "root/2.yaml") {
		t.Fatalf("a suite skipping a root version: %v", err)
	}
	os.WriteFile(filepath.Join(r.site, "unstable", "root", "2.yaml"), data, 0o644)
	if _, err := r.promote("testing", foreman, gen); err != nil {
		t.Fatalf("with the chain complete: %v", err)
	}
	// The promoted suite carries the whole chain.
	for _, f := range []string{"root.yaml", "root/1.yaml", "root/2.yaml"} {
		if _, err := os.Stat(filepath.Join(r.site, "testing", f)); err != nil {
			t.Errorf("testing lacks %s", f)
		}
	}

	noQA := newRepo(t, "foreman-3.15.0-1")
	c, _ = noQA.root.Config()
	c.QAKeys, c.QAThreshold = nil, 0
	bare, _ := trust.NewRoot(c)
	bare.Sign(noQA.rootKey)
	data, _ = bare.Marshal()
	os.WriteFile(noQA.rootFile, data, 0o644)
	if _, err := noQA.promote("testing", foreman, gen); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "has no qa role, so no evidence can count for testing") {
		t.Fatalf("a root without qa: %v", err)
	}
}

// TestPromoteWithdrawn: a version withdrawn in unstable cannot be
// promoted, and the next promotion withdraws it from testing too.
func TestPromoteWithdrawn(t *testing.T) {
	r := newRepo(t, all...)
	env := "kubernetes=1.33,arch=amd64"
	pulp := evidence.Target{Package: "pulp", Version: "3.73.0", Build: 1}
	r.attest(r.x, foreman, evidence.Pass, env, gen.AddDate(0, 1, 0), r.qa)
	r.attest(r.x, pulp, evidence.Pass, env, gen.AddDate(0, 1, 0), r.qa)
	if _, err := r.promote("testing", foreman, gen); err != nil {
		t.Fatal(err)
	}
	w, err := publish.New(publish.WithSite(filepath.Join(r.site, "unstable")), publish.WithSigners(r.idx), publish.WithGenerated(gen.Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Withdraw(context.Background(), "foreman", "3.15.0", 1, "CVE-2026-0001 in the image"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.promote("stable", foreman, gen.Add(2*time.Hour)); err == nil {
		t.Fatal("promoted a version withdrawn before it")
	}
	if _, err := r.promote("testing", foreman, gen.Add(2*time.Hour)); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "foreman 3.15.0 build 1 was withdrawn in unstable (CVE-2026-0001 in the image); withdrawn versions stay withdrawn in every suite") {
		t.Fatalf("promoting a withdrawn version: %v", err)
	}
	// pulp's evidence was made against the index before the withdrawal;
	// it still holds: pulp's entry did not change.
	r.x = r.read("unstable").Verified.Index
	out, err := r.promote("testing", pulp, gen.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Withdrawn) != 1 || out.Withdrawn[0].String() != "foreman 3.15.0 build 1" {
		t.Fatalf("withdrawn in testing: %+v", out.Withdrawn)
	}
	x := r.read("testing").Verified.Index
	if x.Packages["foreman"] != nil || len(x.Withdrawn) != 1 || x.Withdrawn[0].Reason != "CVE-2026-0001 in the image" {
		t.Fatalf("testing: packages %v, withdrawn %+v", x.Packages, x.Withdrawn)
	}
	if !bytes.Contains([]byte(entry(t, filepath.Join(r.site, "testing", "index.yaml"), x.Packages["pulp"].Versions[0].Digest)), []byte("version: 3.73.0")) {
		t.Fatal("pulp is not in testing")
	}
}

// TestPromoteKeepsSetsResolving: a member build promoted alone into a
// suite whose release set pins an older build of the same version would
// move the set's members to it (kubepkg's operator runs the newest build
// meeting ~MAJOR.MINOR), so it is refused; a newer build of the set that pins the new member build
// moves it, superseding the older set build.
func TestPromoteKeepsSetsResolving(t *testing.T) {
	dist := stacktest.CopyDist(t, append(all, "foreman-3.15.0-2")...)
	set1, err := os.ReadFile(filepath.Join(dist, "foreman-stack-3.15.0-1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	set4 := strings.Replace(strings.Replace(string(set1), "  build: 1\n", "  build: 4\n", 1), `version: "=3.15.0+build.1"`, `version: "=3.15.0+build.2"`, 1)
	if err := os.WriteFile(filepath.Join(dist, "foreman-stack-3.15.0-4.yaml"), []byte(set4), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRepoDist(t, dist)
	late := gen.AddDate(0, 1, 0)
	env := "kubernetes=1.33,arch=amd64"
	r.attest(r.x, stack, evidence.Pass, env, late, r.qa)
	if _, err := r.promote("testing", stack, gen); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(r.site, "testing", "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	foreman2 := evidence.Target{Package: "foreman", Version: "3.15.0", Build: 2}
	r.attest(r.x, foreman2, evidence.Pass, env, late, r.qa)
	_, err = r.promote("testing", foreman2, gen)
	want := "in testing, release set foreman-stack 3.15.0 build 1 pins foreman 3.15.0 build 1, but members installed with it (spec.version \"~3.15\") move to foreman 3.15.0 build 2; 'kubepkg install' writes spec.version ~MAJOR.MINOR on each member"
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), want) {
		t.Fatalf("promoting a member build alone: %v\nwant %q", err, want)
	}
	if after, _ := os.ReadFile(filepath.Join(r.site, "testing", "index.yaml")); !bytes.Equal(before, after) {
		t.Fatal("a refused promotion changed the testing index")
	}
	stack4 := evidence.Target{Package: "foreman-stack", Version: "3.15.0", Build: 4}
	r.attest(r.x, stack4, evidence.Pass, env, late, r.qa)
	out, err := r.promote("testing", stack4, gen)
	if err != nil {
		t.Fatalf("promoting the set build that pins foreman build 2: %v", err)
	}
	var got []string
	for _, c := range out.Copied {
		got = append(got, c.String())
	}
	if strings.Join(got, ", ") != "foreman-stack 3.15.0 build 4, foreman 3.15.0 build 2" {
		t.Fatalf("copied %v", got)
	}
}

// TestPromoteSuitesFile reads the suites from SuitesFile when Config is
// nil, as kbuild promote does, and refuses a site without one.
func TestPromoteSuitesFile(t *testing.T) {
	r := newRepo(t, all...)
	r.attest(r.x, foreman, evidence.Pass, "kubernetes=1.33,arch=amd64,runtime=containerd", gen.AddDate(0, 3, 0), r.qa)
	pr := Promotion{Site: r.site, SuitesFile: filepath.Join(t.TempDir(), "suites.yaml"), To: "testing", Target: foreman, Root: r.rootFile,
		Signers: []trust.Signer{r.idx}, Generated: gen, Now: gen, AllowNew: true}
	if _, err := Promote(context.Background(), pr); err == nil || !strings.Contains(err.Error(), "suites.yaml not found: a repository without suites publishes one index") {
		t.Fatalf("Promote without a suites file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r.site, "testing", "index.yaml")); !os.IsNotExist(err) {
		t.Fatalf("a refused promotion wrote testing/index.yaml: %v", err)
	}
	pr.SuitesFile = "testdata/suites.yaml"
	out, err := Promote(context.Background(), pr)
	if err != nil {
		t.Fatal(err)
	}
	if out.From != "unstable" || len(out.Copied) != 1 {
		t.Fatalf("outcome = %+v", out)
	}
}
