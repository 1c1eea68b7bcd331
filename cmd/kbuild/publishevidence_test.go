package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// TestPublishEvidence runs the CI flow against the real registry: publish
// into unstable under a root with a qa role; QA attests smart-proxy and
// commits the evidence into the repository's evidence/; the next publish
// verifies it, copies it into SITE/evidence/ and attaches it to the chart
// as an OCI referrer (listed by the registry, read back with oras); then
// promote counts it. Evidence signed outside the qa role is refused,
// naming the file, and nothing is written.
func TestPublishEvidence(t *testing.T) {
	reg := testenv.Registry(t)
	oras := testenv.Tool(t, "oras")
	work, rootFile, idx, qa := qaRepository(t)
	suites, err := os.ReadFile("../../suite/testdata/suites.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(work, "suites.yaml"), append([]byte("rootSuite: unstable\n"), suites...), 0o644)
	base := uniqueRepo(t, reg)
	publishArgs := []string{"publish", "recipes", "--registry", base, "--plain-http", "--sign-key", idx + ".key", "--root", rootFile, "--site", "site", "--cache-dir", filepath.Join(work, "cache")}
	if r := kbuild(t, work, nil, publishArgs...); r.code != 0 {
		t.Fatalf("first publish: %s", r)
	}

	// QA attests and commits the file into evidence/ by pull request.
	committed := filepath.Join(work, "evidence", "smart-proxy-3.14.0-1", "amd64-1.33.intoto.json")
	r := kbuild(t, work, nil, "attest", "smart-proxy@3.14.0", "--build", "1", "--result", "pass", "--env", "kubernetes=1.33,arch=amd64,runtime=containerd",
		"--passed", "install,upgrade,rollback", "--sign-key", qa+".key", "--root", rootFile, "--site", "site", "-o", committed)
	if r.code != 0 {
		t.Fatalf("attest: %s", r)
	}
	envelope := readFile(t, committed)

	// Evidence signed by the index key: refused, naming the file, before
	// anything is built, pushed or written.
	bad := filepath.Join(work, "evidence", "bad", "index-key.intoto.json")
	writeForeignEvidence(t, filepath.Join(work, "site", "unstable"), rootFile, idx+".key", bad)
	indexBefore := readFile(t, filepath.Join(work, "site", "unstable", "index.yaml"))
	r = kbuild(t, work, nil, publishArgs...)
	if r.code != exitRefused || !strings.Contains(r.stderr, "evidence "+filepath.Join("evidence", "bad", "index-key.intoto.json")+": evidence refused: signed by 0 of the qa role's keys") ||
		!strings.Contains(r.stderr, "nothing was published: fix or remove the file") {
		t.Fatalf("publish with evidence outside the qa role: %s", r)
	}
	if readFile(t, filepath.Join(work, "site", "unstable", "index.yaml")) != indexBefore {
		t.Error("a refused publish re-signed the index")
	}
	if _, err := os.Stat(filepath.Join(work, "site", "evidence")); err == nil {
		t.Error("a refused publish wrote evidence into the site")
	}
	os.RemoveAll(filepath.Dir(bad))

	// The next publish takes the committed evidence.
	r = kbuild(t, work, nil, publishArgs...)
	dest := filepath.Join("site", "evidence", "smart-proxy-3.14.0-1", "arch=amd64,kubernetes=1.33,runtime=containerd.intoto.json")
	if r.code != 0 || !strings.Contains(r.stderr, "evidence: 1 new evidence file(s) verified against the qa role of "+rootFile) ||
		!strings.Contains(r.stdout, "wrote "+dest+": smart-proxy 3.14.0 build 1 from "+filepath.Join("evidence", "smart-proxy-3.14.0-1", "amd64-1.33.intoto.json")+" (sha256:") {
		t.Fatalf("publish with evidence: %s", r)
	}
	if got := readFile(t, filepath.Join(work, dest)); got != envelope {
		t.Error("the site's evidence is not the committed file byte for byte")
	}
	// The publish that brought the evidence wrote the compatibility matrix
	// and linked it from the package's page and the page of suites.
	if !strings.Contains(r.stdout, "wrote "+filepath.Join("site", "compat", "smart-proxy.html")) {
		t.Errorf("publish with evidence wrote no compatibility matrix: %s", r)
	}
	for file, want := range map[string]string{
		"site/compat/smart-proxy.html":            `<a href="../evidence/smart-proxy-3.14.0-1/arch=amd64,kubernetes=1.33,runtime=containerd.intoto.json">pass</a>`,
		"site/unstable/packages/smart-proxy.html": `<a href="../../compat/smart-proxy.html">smart-proxy</a>`,
		"site/index.html":                         `<li><a href="compat/smart-proxy.html">smart-proxy</a></li>`,
	} {
		if page := readFile(t, filepath.Join(work, filepath.FromSlash(file))); !strings.Contains(page, want) {
			t.Errorf("%s lacks %s", file, want)
		}
	}
	var subject string
	for _, l := range strings.Split(r.stdout, "\n") {
		if s, ok := strings.CutPrefix(l, "attached evidence to "); ok {
			subject = s
		}
	}
	if subject == "" {
		t.Fatalf("publish attached no evidence: %s", r)
	}
	// The registry lists it among the chart's referrers.
	d, err := name.NewDigest(subject, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	found := ""
	refs := testenv.Referrers(t, d)
	for _, ref := range refs {
		if ref.ArtifactType == publish.EvidenceArtifactType && string(ref.Payload) == envelope {
			found = ref.Digest
		}
	}
	if found == "" {
		t.Errorf("no referrer of %s holds the evidence (%d referrers)", subject, len(refs))
	}
	out, err := exec.Command(oras, "discover", "--plain-http", "--format", "tree", subject).CombinedOutput()
	if err != nil || !strings.Contains(string(out), publish.EvidenceArtifactType) || !strings.Contains(string(out), found) {
		t.Errorf("oras discover %s: %v, want the evidence %s among the referrers:\n%s", subject, err, found, out)
	}
	// Publishing again copies and attaches nothing new.
	if r := kbuild(t, work, nil, publishArgs...); r.code != 0 || strings.Contains(r.stdout, "attached evidence") {
		t.Fatalf("publish with the same evidence: %s", r)
	}
	// promote counts the copied evidence.
	r = kbuild(t, work, nil, "promote", "smart-proxy@3.14.0", "--build", "1", "--to", "testing", "--allow-new", "--root", rootFile, "--site", "site", "--sign-key", idx+".key")
	if r.code != 0 || !strings.Contains(r.stdout, "promoted smart-proxy 3.14.0 build 1 from unstable to testing") {
		t.Fatalf("promote with the published evidence: %s", r)
	}
}

// TestPublishEvidenceRoot is TestPublishEvidence without suites.yaml: the
// one index is at the site root, and the publish that brings evidence
// writes the compatibility matrix beside its catalog, linked from the
// package's page and the package list.
func TestPublishEvidenceRoot(t *testing.T) {
	reg := testenv.Registry(t)
	work, rootFile, idx, qa := qaRepository(t)
	publishArgs := []string{"publish", "recipes", "--registry", uniqueRepo(t, reg), "--plain-http", "--sign-key", idx + ".key", "--root", rootFile, "--site", "site", "--cache-dir", filepath.Join(work, "cache")}
	if r := kbuild(t, work, nil, publishArgs...); r.code != 0 {
		t.Fatalf("first publish: %s", r)
	}
	if _, err := os.Stat(filepath.Join(work, "site", "compat")); err == nil {
		t.Fatal("a publish without evidence wrote a compatibility matrix")
	}
	committed := filepath.Join(work, "evidence", "smart-proxy-3.14.0-1", "amd64-1.33.intoto.json")
	r := kbuild(t, work, nil, "attest", "smart-proxy@3.14.0", "--build", "1", "--result", "pass", "--env", "kubernetes=1.33,arch=amd64",
		"--passed", "install,upgrade", "--sign-key", qa+".key", "--root", rootFile, "--site", "site", "-o", committed)
	if r.code != 0 {
		t.Fatalf("attest: %s", r)
	}
	r = kbuild(t, work, nil, publishArgs...)
	if r.code != 0 || !strings.Contains(r.stdout, "wrote "+filepath.Join("site", "compat", "smart-proxy.html")) {
		t.Fatalf("publish with evidence and no suites.yaml wrote no compatibility matrix: %s", r)
	}
	for file, want := range map[string]string{
		"site/compat/smart-proxy.html":   `<dt>Published</dt><dd><a href="../packages/smart-proxy.html#v3.14.0-1">smart-proxy 3.14.0 build 1</a> in the signed index</dd>`,
		"site/packages/smart-proxy.html": `<a href="../compat/smart-proxy.html">smart-proxy</a>`,
		"site/index.html":                `<li><a href="compat/smart-proxy.html">smart-proxy</a></li>`,
	} {
		if page := readFile(t, filepath.Join(work, filepath.FromSlash(file))); !strings.Contains(page, want) {
			t.Errorf("%s lacks %s", file, want)
		}
	}
	page := readFile(t, filepath.Join(work, "site", "compat", "smart-proxy.html"))
	for _, want := range []string{`<a href="../evidence/smart-proxy-3.14.0-1/arch=amd64,kubernetes=1.33.intoto.json">pass</a>`, `<span class="badge phase passed">install ✓</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("compat/smart-proxy.html lacks %s", want)
		}
	}
}

// writeForeignEvidence writes a pass for smart-proxy 3.14.0 build 1 about
// the right digests, but signed by the key in keyFile.
func writeForeignEvidence(t *testing.T, site, rootFile, keyFile, out string) {
	t.Helper()
	root, err := siteread.ReadRootFile(rootFile)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := siteread.ReadIndex(context.Background(), site, &trust.Trust{TrustedRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	target := evidence.Target{Package: "smart-proxy", Version: "3.14.0", Build: 1}
	subjects, err := evidence.Subjects(pub.Verified.Index, target)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	st, err := evidence.New(evidence.Attestation{Target: target, Result: evidence.Pass, Env: map[string]string{"kubernetes": "1.34", "arch": "arm64"}, Issued: now, Expires: now.Add(time.Hour)}, subjects)
	if err != nil {
		t.Fatal(err)
	}
	k, _, err := trust.LoadOrCreateKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	env, err := evidence.Sign(st, k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, env, 0o644); err != nil {
		t.Fatal(err)
	}
}

// qaRepository is a recipes repository (the examples, in WORK/recipes)
// under a signed root with index and qa roles (WORK/keys/root.yaml), and
// SOURCE_DATE_EPOCH an hour ago: the work directory, the root file and the
// index and qa keys' paths without .key or .pub.
func qaRepository(t *testing.T) (work, rootFile, idx, qa string) {
	t.Helper()
	work = t.TempDir()
	if err := copyDir(filepath.Join(repoRoot, "examples"), filepath.Join(work, "recipes")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(work, "recipes", "examples.go"))
	keys := filepath.Join(work, "keys")
	rootKey := keygen(t, keys, "root")
	idx, qa = keygen(t, keys, "index"), keygen(t, keys, "qa")
	rootFile = filepath.Join(keys, "root.yaml")
	epochEnv(t, time.Hour)
	if r := runInProcess("trust", "root", "new", "--root-key", rootKey+".pub", "--index-key", idx+".pub", "--qa-key", qa+".pub", "-o", rootFile); r.code != 0 {
		t.Fatal(r)
	}
	if r := runInProcess("trust", "root", "sign", rootFile, "--sign-key", rootKey+".key"); r.code != 0 {
		t.Fatal(r)
	}
	return work, rootFile, idx, qa
}
