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

	"kbuild.dev/kbuild/internal/sigstoretest"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/keyless"
)

// cosignVerify runs the real cosign CLI's verify of ref with the public
// key pub, offline (key-based: no Rekor entry, no Sigstore TUF root), as
// Flux's verify.provider: cosign does with the key in a Secret.
func cosignVerify(t *testing.T, pub, ref string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Tool(t, "cosign"), "verify", "--key", pub, "--insecure-ignore-tlog=true", "--allow-http-registry", ref)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "TUF_ROOT="+filepath.Join(home, "tuf"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestBuildSignsCharts: kbuild build --registry with --sign-key pushes
// charts that the real cosign verifies with the repository's public key;
// a stranger's key is refused, and so is a chart built without a key.
func TestBuildSignsCharts(t *testing.T) {
	reg := testenv.Registry(t)
	keys := t.TempDir()
	idx, stranger := keygen(t, keys, "index"), keygen(t, keys, "stranger")
	charts := func(args ...string) []string {
		t.Helper()
		out := t.TempDir()
		r := kbuild(t, repoRoot, []string{"SOURCE_DATE_EPOCH=1700000000"}, append([]string{"build", "examples/smart-proxy", "--registry", uniqueRepo(t, reg), "--plain-http", "-o", out, "--cache-dir", filepath.Join(keys, "cache")}, args...)...)
		if r.code != 0 {
			t.Fatalf("kbuild build: %s", r)
		}
		var refs []string
		for _, b := range readRecords(t, out) {
			for _, c := range b.Info.Charts {
				ref := strings.TrimPrefix(c.Ref, "oci://")
				refs = append(refs, ref[:strings.LastIndex(ref, ":")]+"@"+c.Manifest)
			}
		}
		if len(refs) == 0 {
			t.Fatalf("kbuild build pushed no chart: %s", r)
		}
		return refs
	}
	for _, ref := range charts("--sign-key", idx+".key") {
		if out, err := cosignVerify(t, idx+".pub", ref); err != nil || !strings.Contains(out, "The signatures were verified against the specified public key") {
			t.Errorf("cosign verify %s with the repository key: %v\n%s", ref, err, out)
		}
		if out, err := cosignVerify(t, stranger+".pub", ref); err == nil {
			t.Errorf("cosign verify %s with a stranger's key passed:\n%s", ref, out)
		}
	}
	for _, ref := range charts() {
		if out, err := cosignVerify(t, idx+".pub", ref); err == nil {
			t.Errorf("cosign verify %s passed for a chart built without --sign-key:\n%s", ref, out)
		}
	}
}

// TestBuildSignsChartsKeyless: kbuild build --keyless, with an OIDC token
// of a loopback issuer in KBUILD_OIDC_TOKEN and the loopback Fulcio and
// Rekor (internal/sigstoretest), pushes charts the real cosign verifies
// for the workflow's identity with that Sigstore's trusted root; another
// identity is refused, and --keyless without a token fails naming how to
// get one.
func TestBuildSignsChartsKeyless(t *testing.T) {
	reg := testenv.Registry(t)
	ss := sigstoretest.New(t)
	claims := sigstoretest.Workflow("acme/packages", "publish.yml")
	dir := t.TempDir()
	trusted := ss.TrustedRoot(dir)
	out := t.TempDir()
	args := []string{"build", "examples/smart-proxy", "--registry", uniqueRepo(t, reg), "--plain-http", "-o", out, "--cache-dir", filepath.Join(dir, "cache"),
		"--keyless", "--fulcio-url", ss.FulcioURL, "--rekor-url", ss.RekorURL}
	if r := kbuild(t, repoRoot, []string{"SOURCE_DATE_EPOCH=1700000000", "ACTIONS_ID_TOKEN_REQUEST_URL=", keyless.TokenEnv + "="}, args...); r.code == 0 || !strings.Contains(r.stderr, "id-token: write") {
		t.Errorf("kbuild build --keyless without a token: %s; want a failure naming id-token: write", r)
	}
	r := kbuild(t, repoRoot, []string{"SOURCE_DATE_EPOCH=1700000000", keyless.TokenEnv + "=" + ss.Token(claims)}, args...)
	if r.code != 0 {
		t.Fatalf("kbuild build --keyless: %s", r)
	}
	verify := func(ref, subject string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, testenv.Tool(t, "cosign"), "verify", "--trusted-root", trusted, "--certificate-identity", subject,
			"--certificate-oidc-issuer", ss.IssuerURL, "--insecure-ignore-sct", "--allow-http-registry", ref)
		home := t.TempDir()
		cmd.Env = append(os.Environ(), "HOME="+home, "TUF_ROOT="+filepath.Join(home, "tuf"))
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	n := 0
	for _, b := range readRecords(t, out) {
		for _, c := range b.Info.Charts {
			ref := strings.TrimPrefix(c.Ref, "oci://")
			ref = ref[:strings.LastIndex(ref, ":")] + "@" + c.Manifest
			n++
			if o, err := verify(ref, claims.Subject()); err != nil {
				t.Errorf("cosign verify %s keyless: %v\n%s", ref, err, o)
			}
			if o, err := verify(ref, "https://github.com/acme/packages/.github/workflows/other.yml@refs/heads/main"); err == nil {
				t.Errorf("cosign verify %s for another workflow passed:\n%s", ref, o)
			}
		}
	}
	if n == 0 {
		t.Fatalf("kbuild build pushed no chart: %s", r)
	}
}

// TestBuildKeylessTrustedRoot: with --trusted-root (a private Sigstore's
// trusted_root.json), build --keyless verifies each keyless signature
// against it before pushing it: the loopback Sigstore's own trusted root
// passes and the charts carry keyless signatures; another Sigstore's
// refuses the signatures, so the build fails naming the statement and
// the instance, and pushes none; --trusted-root without --keyless is a
// usage error.
func TestBuildKeylessTrustedRoot(t *testing.T) {
	reg := testenv.Registry(t)
	ss := sigstoretest.New(t)
	claims := sigstoretest.Workflow("acme/packages", "publish.yml")
	dir := t.TempDir()
	trusted := ss.TrustedRoot(t.TempDir())
	other := sigstoretest.New(t).TrustedRoot(t.TempDir())
	env := []string{"SOURCE_DATE_EPOCH=1700000000", keyless.TokenEnv + "=" + ss.Token(claims)}
	build := func(repo, out string, extra ...string) result {
		args := append([]string{"build", "examples/smart-proxy", "--registry", repo, "--plain-http", "-o", out, "--cache-dir", filepath.Join(dir, "cache")}, extra...)
		return kbuild(t, repoRoot, env, args...)
	}
	if r := build(uniqueRepo(t, reg), t.TempDir(), "--trusted-root", trusted); r.code != 2 || !strings.Contains(r.stderr, "--trusted-root "+trusted+": it verifies --keyless signatures, and there is no --keyless") {
		t.Errorf("build --trusted-root without --keyless: %s; want a usage error", r)
	}
	keylessArgs := []string{"--keyless", "--fulcio-url", ss.FulcioURL, "--rekor-url", ss.RekorURL, "--trusted-root"}
	repo := uniqueRepo(t, reg)
	if r := build(repo, t.TempDir(), append(keylessArgs, other)...); r.code == 0 || !strings.Contains(r.stdout+r.stderr, "keyless signature of the https://sigstore.dev/cosign/sign/v1 statement (Fulcio "+ss.FulcioURL+", Rekor "+ss.RekorURL+") does not verify against the trusted root") {
		t.Fatalf("build --keyless --trusted-root of another Sigstore: %s; want the signature refused", r)
	}
	out := t.TempDir()
	if r := build(repo, out, append(keylessArgs, trusted)...); r.code != 0 {
		t.Fatalf("build --keyless --trusted-root of its Sigstore: %s", r)
	}
	n := 0
	for _, b := range readRecords(t, out) {
		for _, c := range b.Info.Charts {
			ref := strings.TrimPrefix(c.Ref, "oci://")
			d, err := name.NewDigest(ref[:strings.LastIndex(ref, ":")]+"@"+c.Manifest, name.Insecure)
			if err != nil {
				t.Fatal(err)
			}
			for _, rf := range testenv.Referrers(t, d) {
				if keyless.IsKeyless(rf.Payload) {
					n++
				}
			}
		}
	}
	if n == 0 {
		t.Error("the charts built with --trusted-root carry no keyless signature")
	}
}
