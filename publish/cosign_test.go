package publish

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/sigbundle"
	"kbuild.dev/kbuild/trust"
)

// cosign runs the real cosign CLI with args, offline (a throwaway home,
// no Sigstore TUF root: key-based verification needs none), and returns
// its combined output and error.
func cosign(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Tool(t, "cosign"), args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "TUF_ROOT="+filepath.Join(home, "tuf"), "COSIGN_EXPERIMENTAL=0")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestCosignVerifiesCharts publishes a package into the real registry and
// lets the real cosign CLI judge what kbuild attached to its chart: the
// signature (cosign verify), the SBOM and the provenance attestations
// (cosign verify-attestation --type cyclonedx / slsaprovenance1) pass with
// the repository's public key, as Flux's verify.provider: cosign does with
// that key in a Secret; a stranger's key, and a chart changed after
// signing that carries the original's bundles, are refused.
func TestCosignVerifiesCharts(t *testing.T) {
	f := newE2EFixture(t)
	f.recipe("alpha", "1.0.0", 1)
	if _, err := f.publish("site", nil); err != nil {
		t.Fatalf("publish: %v\n%s", err, &f.stderr)
	}
	dir := t.TempDir()
	pub := filepath.Join(dir, "kbuild.pub")
	if err := os.WriteFile(pub, f.key.Public().PEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	stranger, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	wrong := filepath.Join(dir, "stranger.pub")
	if err := os.WriteFile(wrong, stranger.Public().PEM(), 0o644); err != nil {
		t.Fatal(err)
	}

	c := readBuildInfo(t, filepath.Join(f.work, "site"), "alpha", "1.0.0").Charts[0]
	repo := strings.TrimPrefix(c.Ref[:strings.LastIndexByte(c.Ref, ':')], "oci://")
	ref := repo + "@" + c.Manifest
	// Without --insecure-ignore-tlog cosign wants a Rekor entry, which a
	// key-signed bundle does not have; Flux sets it for a public key.
	verify := []string{"--key", pub, "--insecure-ignore-tlog=true", "--allow-http-registry"}

	out, err := cosign(t, append(append([]string{"verify"}, verify...), ref)...)
	if err != nil {
		t.Fatalf("cosign verify %s with the repository key: %v\n%s", ref, err, out)
	}
	if !strings.Contains(out, sigbundle.SignPredicate) && !strings.Contains(out, c.Manifest[len("sha256:"):]) {
		t.Errorf("cosign verify printed no verified statement about %s:\n%s", c.Manifest, out)
	}
	// The tag resolves to the same manifest: what a Flux OCIRepository
	// with ref.tag or ref.semver verifies.
	if out, err := cosign(t, append(append([]string{"verify"}, verify...), c.Ref[len("oci://"):])...); err != nil {
		t.Errorf("cosign verify %s (by tag): %v\n%s", c.Ref, err, out)
	}
	for _, typ := range []struct{ flag, predicate string }{{"cyclonedx", sigbundle.CycloneDXPredicate}, {"slsaprovenance1", sigbundle.SLSAProvenanceV1}} {
		out, err := cosign(t, append(append([]string{"verify-attestation", "--type", typ.flag}, verify...), ref)...)
		if err != nil {
			t.Errorf("cosign verify-attestation --type %s: %v\n%s", typ.flag, err, out)
			continue
		}
		if !strings.Contains(out, typ.predicate) && !strings.Contains(out, "payload") {
			t.Errorf("cosign verify-attestation --type %s printed no %s statement:\n%s", typ.flag, typ.predicate, out)
		}
	}

	if out, err := cosign(t, "verify", "--key", wrong, "--insecure-ignore-tlog=true", "--allow-http-registry", ref); err == nil {
		t.Errorf("cosign verify with a stranger's key passed:\n%s", out)
	}

	// A changed chart (another manifest) to which an attacker copied every
	// bundle of the original: the statements are about the original's
	// digest, so cosign refuses it.
	tref, copied := changedCopy(t, ref, f.epoch)
	if len(copied) != 3 {
		t.Fatalf("the chart has %d Sigstore bundles, want 3 (signature, SBOM, provenance)", len(copied))
	}
	if out, err := cosign(t, append(append([]string{"verify"}, verify...), tref.String())...); err == nil {
		t.Errorf("cosign verify passed for a changed chart carrying the original's bundles:\n%s", out)
	}
	var statements []string
	for _, r := range testenv.Referrers(t, tref) {
		var b struct {
			DSSEEnvelope json.RawMessage `json:"dsseEnvelope"`
		}
		if json.Unmarshal(r.Payload, &b) == nil && b.DSSEEnvelope != nil {
			statements = append(statements, r.Digest)
		}
	}
	if len(statements) != 3 {
		t.Errorf("the changed chart lists %d bundles as referrers, want the 3 copied (the refusal must be cosign's, not a missing bundle)", len(statements))
	}
}

// changedCopy writes a changed chart (the chart at ref, a manifest digest,
// with another annotation, so another manifest) and copies every Sigstore
// bundle of the original to it as its referrers, as an attacker would:
// it returns the changed chart and the bundles copied.
func changedCopy(t *testing.T, ref string, epoch time.Time) (name.Digest, [][]byte) {
	t.Helper()
	orig, err := name.NewDigest(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(orig)
	if err != nil {
		t.Fatal(err)
	}
	timg := mutate.Annotations(img, map[string]string{"org.opencontainers.image.description": "changed after signing"}).(v1.Image)
	tdesc, err := partial.Descriptor(timg)
	if err != nil {
		t.Fatal(err)
	}
	tref := orig.Context().Digest(tdesc.Digest.String())
	if err := remote.Write(tref, timg); err != nil {
		t.Fatal(err)
	}
	var copied [][]byte
	for _, r := range testenv.Referrers(t, orig) {
		if r.ArtifactType != sigbundle.MediaType {
			continue
		}
		ri, err := oci.ReferrerImage(*tdesc, sigbundle.MediaType, sigbundle.MediaType, r.Payload, epoch)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := ri.Digest()
		if err := remote.Write(orig.Context().Digest(d.String()), ri); err != nil {
			t.Fatal(err)
		}
		copied = append(copied, r.Payload)
	}
	return tref, copied
}
