package publish

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/sigstoretest"
	"kbuild.dev/kbuild/keyless"
	"kbuild.dev/kbuild/sigbundle"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
)

// keylessSigner returns a keyless signer of the loopback Sigstore ss for
// the workflow publish.yml of acme/packages.
func keylessSigner(t *testing.T, ss *sigstoretest.Sigstore) *keyless.Signer {
	t.Helper()
	tok := ss.Token(sigstoretest.Workflow("acme/packages", "publish.yml"))
	s, err := keyless.New(context.Background(), func(context.Context) (string, error) { return tok, nil }, keyless.WithFulcio(ss.FulcioURL), keyless.WithRekor(ss.RekorURL))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCosignVerifiesKeylessCharts publishes with WithKeyless against a
// loopback Sigstore (OIDC issuer, Fulcio, Rekor: internal/sigstoretest)
// into the real registry, and lets the real cosign CLI judge the chart
// with that Sigstore's trusted_root.json: the signature and the SBOM and
// provenance attestations verify for the workflow's identity and issuer
// (--insecure-ignore-sct: the test CA issues no SCTs); another subject,
// another issuer, another Sigstore's trusted root (other CA and log
// keys) and a changed chart carrying the original's bundles are refused.
// The key-signed bundles are there too and still verify with the key.
// The site names the identity (keys/keyless.json) and the catalog pins
// it in the Flux snippet and the cosign verify line.
func TestCosignVerifiesKeylessCharts(t *testing.T) {
	f := newE2EFixture(t)
	ss := sigstoretest.New(t)
	s := keylessSigner(t, ss)
	f.recipe("alpha", "1.0.0", 1)
	if _, err := f.publish("site", nil, WithKeyless(s)); err != nil {
		t.Fatalf("publish: %v\n%s", err, &f.stderr)
	}
	dir := t.TempDir()
	trusted := ss.TrustedRoot(dir)
	strangerDir := t.TempDir()
	stranger := sigstoretest.New(t).TrustedRoot(strangerDir)
	id := s.Identity()
	if id.Subject != "https://github.com/acme/packages/.github/workflows/publish.yml@refs/heads/main" || id.Issuer != ss.IssuerURL {
		t.Fatalf("Identity() = %+v", id)
	}

	c := readBuildInfo(t, filepath.Join(f.work, "site"), "alpha", "1.0.0").Charts[0]
	repo := strings.TrimPrefix(c.Ref[:strings.LastIndexByte(c.Ref, ':')], "oci://")
	ref := repo + "@" + c.Manifest
	verify := func(root, subject, issuer string) []string {
		return []string{"--trusted-root", root, "--certificate-identity", subject, "--certificate-oidc-issuer", issuer, "--insecure-ignore-sct", "--allow-http-registry"}
	}
	good := verify(trusted, id.Subject, id.Issuer)
	if out, err := cosign(t, append(append([]string{"verify"}, good...), ref)...); err != nil {
		t.Fatalf("cosign verify %s keyless: %v\n%s", ref, err, out)
	}
	for _, typ := range []string{"cyclonedx", "slsaprovenance1"} {
		if out, err := cosign(t, append(append([]string{"verify-attestation", "--type", typ}, good...), ref)...); err != nil {
			t.Errorf("cosign verify-attestation --type %s keyless: %v\n%s", typ, err, out)
		}
	}
	// Without --insecure-ignore-sct cosign wants the CT log's promise,
	// which the test CA does not give: the flag is what lets it pass.
	if out, err := cosign(t, append([]string{"verify", "--trusted-root", trusted, "--certificate-identity", id.Subject, "--certificate-oidc-issuer", id.Issuer, "--allow-http-registry"}, ref)...); err == nil {
		t.Errorf("cosign verify without --insecure-ignore-sct passed:\n%s", out)
	}
	for _, bad := range []struct{ name, root, subject, issuer string }{
		{"another workflow", trusted, "https://github.com/acme/packages/.github/workflows/other.yml@refs/heads/main", id.Issuer},
		{"another repository", trusted, "https://github.com/mallory/packages/.github/workflows/publish.yml@refs/heads/main", id.Issuer},
		{"another issuer", trusted, id.Subject, keyless.GitHubIssuer},
		{"another Sigstore's trusted root", stranger, id.Subject, id.Issuer},
	} {
		if out, err := cosign(t, append(append([]string{"verify"}, verify(bad.root, bad.subject, bad.issuer)...), ref)...); err == nil {
			t.Errorf("cosign verify with %s passed:\n%s", bad.name, out)
		}
	}
	pub := filepath.Join(dir, "kbuild.pub")
	if err := os.WriteFile(pub, f.key.Public().PEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := cosign(t, "verify", "--key", pub, "--insecure-ignore-tlog=true", "--allow-http-registry", ref); err != nil {
		t.Errorf("cosign verify --key beside the keyless bundles: %v\n%s", err, out)
	}

	// A changed chart carrying copies of all of the original's bundles.
	tref, copied := changedCopy(t, ref, f.epoch)
	keylessBundles := 0
	for _, b := range copied {
		if keyless.IsKeyless(b) {
			keylessBundles++
		}
	}
	if keylessBundles != 3 {
		t.Fatalf("the chart has %d keyless Sigstore bundles, want 3 (signature, SBOM, provenance)", keylessBundles)
	}
	if out, err := cosign(t, append(append([]string{"verify"}, good...), tref.String())...); err == nil {
		t.Errorf("cosign verify passed for a changed chart carrying the original's keyless bundles:\n%s", out)
	}

	// The site names the identity; the catalog pins it.
	data, err := os.ReadFile(filepath.Join(f.work, "site", filepath.FromSlash(sitelayout.KeylessFile)))
	if err != nil {
		t.Fatal(err)
	}
	var named sigbundle.Identity
	if err := json.Unmarshal(data, &named); err != nil || named != id {
		t.Errorf("%s = %s (%v), want %+v", sitelayout.KeylessFile, data, err, id)
	}
	// The root suite's mirror (rootSuite) names it too.
	root := t.TempDir()
	if _, err := MirrorIndex(filepath.Join(f.work, "site"), root); err != nil {
		t.Fatal(err)
	}
	if mirrored, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(sitelayout.KeylessFile))); err != nil || string(mirrored) != string(data) {
		t.Errorf("MirrorIndex: %s = %q, %v; want the suite's", sitelayout.KeylessFile, mirrored, err)
	}
	// A copy into the next suite (promote), by a publisher without
	// WithKeyless, keeps naming it and pinning it in its catalog.
	from, err := siteread.ReadIndex(context.Background(), filepath.Join(f.work, "site"), f.publisher("stable", nil).baseTrust())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.publisher("stable", nil).Copy(context.Background(), from, []VersionRef{{Package: "alpha", Version: "1.0.0", Build: 1}}); err != nil {
		t.Fatalf("Copy: %v\n%s", err, &f.stderr)
	}
	if copied, err := os.ReadFile(filepath.Join(f.work, "stable", filepath.FromSlash(sitelayout.KeylessFile))); err != nil || string(copied) != string(data) {
		t.Errorf("Copy: %s = %q, %v; want the source suite's", sitelayout.KeylessFile, copied, err)
	}
	if page, err := os.ReadFile(filepath.Join(f.work, "stable", "packages", "alpha.html")); err != nil || !strings.Contains(string(page), "matchOIDCIdentity:") {
		t.Errorf("the copied suite's page does not pin the keyless identity (%v)", err)
	}
	page, err := os.ReadFile(filepath.Join(f.work, "site", "packages", "alpha.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"matchOIDCIdentity:",
		`subject: &#34;^https://github\\.com/acme/packages/\\.github/workflows/publish\\.yml@refs/heads/main$&#34;`,
		"--certificate-identity https://github.com/acme/packages/.github/workflows/publish.yml@refs/heads/main",
		"--certificate-oidc-issuer " + id.Issuer,
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("alpha.html lacks %q", want)
		}
	}
}
