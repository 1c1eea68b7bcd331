package provenance

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/chart"

	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

type testSigner struct {
	priv ed25519.PrivateKey
	der  []byte
	pub  *trust.PublicKey
}

func newTestSigner(t *testing.T) *testSigner {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(pub)
	pk, err := trust.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return &testSigner{priv, der, pk}
}

func (s *testSigner) KeyID() string {
	sum := sha256.Sum256(s.der)
	return hex.EncodeToString(sum[:])
}

func (s *testSigner) Public() *trust.PublicKey { return s.pub }

func (s *testSigner) Sign(b []byte) ([]byte, error) { return ed25519.Sign(s.priv, b), nil }

var testInfo = &spec.BuildInfo{
	Package: "demo", Version: "1.0.0", Build: 2, Recipe: "demo/recipe.yaml",
	RecipeDigest: "sha256:" + strings.Repeat("a", 64), Commit: strings.Repeat("c", 40), Builder: "kbuild test",
	Sources: []spec.ResolvedSource{{Name: "upstream", Kind: "url", Origin: "https://example.com/x.yaml", Digest: "sha256:" + strings.Repeat("b", 64)}},
}

var testChartRef = spec.BuiltChart{Name: "demo", Ref: "oci://r/demo/demo:1.0.0-2", Digest: "sha256:" + strings.Repeat("d", 64), Manifest: "sha256:" + strings.Repeat("e", 64)}

func init() { testInfo.Charts = []spec.BuiltChart{testChartRef} }

func TestProvenanceSignVerify(t *testing.T) {
	signer := newTestSigner(t)
	st := New(testInfo, "https://kbuild.dev/builders/local", "", time.Unix(1700000000, 0))
	env, err := Sign(st, signer)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Sign(New(testInfo, "https://kbuild.dev/builders/local", "", time.Unix(1700000000, 0)), signer)
	if string(env) != string(again) {
		t.Errorf("provenance is not deterministic")
	}
	got, err := Verify(env, signer.der, testChartRef.Digest)
	if err != nil {
		t.Fatalf("Verify = %v", err)
	}
	if d := got.Predicate.BuildDefinition.ResolvedDependencies; len(d) != 1 || d[0].URI != "https://example.com/x.yaml" {
		t.Errorf("resolved dependencies = %+v", d)
	}
	if got.Predicate.BuildDefinition.ExternalParameters.Recipe.Digest["gitCommit"] != testInfo.Commit {
		t.Errorf("recipe commit not recorded: %+v", got.Predicate.BuildDefinition.ExternalParameters.Recipe)
	}

	other := newTestSigner(t)
	var env2 trust.Envelope
	json.Unmarshal(env, &env2)
	payload, _ := base64.StdEncoding.DecodeString(env2.Payload)
	changed := strings.Replace(string(payload), hexOf(testChartRef.Digest), strings.Repeat("f", 64), 1)
	env2.Payload = base64.StdEncoding.EncodeToString([]byte(changed))
	tampered, _ := json.Marshal(env2)

	for _, tc := range []struct {
		name     string
		env, key []byte
		digest   string
		want     string
	}{
		{"signed by another key", env, other.der, testChartRef.Digest, "no valid signature by key " + other.KeyID()},
		{"changed subject", tampered, signer.der, testChartRef.Digest, "no valid signature"},
		{"other chart", env, signer.der, "sha256:" + strings.Repeat("9", 64), "is not a subject of the statement"},
		{"not an envelope", []byte("{}x"), signer.der, testChartRef.Digest, "not a DSSE envelope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(tc.env, tc.key, tc.digest)
			if !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestBuilderIdentity(t *testing.T) {
	env := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "org/pkgs",
		"GITHUB_WORKFLOW_REF": "org/pkgs/.github/workflows/publish.yml@refs/heads/main", "GITHUB_RUN_ID": "42", "GITHUB_RUN_ATTEMPT": "1",
	}
	id, inv := BuilderIdentity(func(k string) string { return env[k] })
	if id != "https://github.com/org/pkgs/.github/workflows/publish.yml@refs/heads/main" || inv != "https://github.com/org/pkgs/actions/runs/42/attempts/1" {
		t.Errorf("BuilderIdentity = %q, %q", id, inv)
	}
	if id, _ := BuilderIdentity(func(string) string { return "" }); id != "https://kbuild.dev/builders/local" {
		t.Errorf("local BuilderIdentity = %q", id)
	}
}

// TestReferrer pushes a chart and its provenance as a referrer to an
// in-process registry without the referrers API and finds it through the
// tag fallback scheme.
func TestReferrer(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	target, err := oci.NewRegistryTarget("oci://"+host+"/p", true)
	if err != nil {
		t.Fatal(err)
	}
	// The layer's bytes are the chart archive's; the referrer only needs
	// a subject, so any bytes stand for it here.
	img, err := oci.ChartImage([]byte("demo-1.0.0-1.tgz"), &chart.Metadata{Name: "demo", Version: "1.0.0-1", APIVersion: "v2"}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := target.Push(ctx, "demo/demo", "1.0.0-1", img); err != nil {
		t.Fatal(err)
	}
	desc, err := partial.Descriptor(img)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := oci.ReferrerImage(*desc, ArtifactType, DSSEEnvelopeMediaType, []byte(`{"payloadType":"x"}`), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := target.PushReferrer(ctx, "demo/demo", ref); err != nil {
		t.Fatal(err)
	}
	subject, _ := name.NewDigest(host+"/p/demo/demo@"+desc.Digest.String(), name.Insecure)
	idx, err := remote.Referrers(subject)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := idx.IndexManifest()
	rd, _ := ref.Digest()
	if len(m.Manifests) != 1 || m.Manifests[0].Digest != rd || m.Manifests[0].ArtifactType != ArtifactType {
		t.Fatalf("referrers = %+v, want %s with artifactType %s", m.Manifests, rd, ArtifactType)
	}
}

// A site holds one provenance file per version: the envelope is compact
// JSON with one final newline, and a signature over the payload still
// verifies.
func TestProvenanceEnvelopeCompact(t *testing.T) {
	signer := newTestSigner(t)
	env, err := Sign(New(testInfo, "https://kbuild.dev/builders/local", "", time.Unix(1700000000, 0)), signer)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(env), "\n") != 1 || !strings.HasSuffix(string(env), "}\n") || strings.Contains(string(env), ": ") {
		t.Errorf("envelope is not compact JSON with one final newline:\n%s", env)
	}
	var e trust.Envelope
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	payload, err := base64.StdEncoding.DecodeString(e.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(payload), "\n") {
		t.Errorf("payload is not compact JSON:\n%s", payload)
	}
	if _, err := Verify(env, signer.der, testChartRef.Digest); err != nil {
		t.Errorf("Verify of the compact envelope = %v", err)
	}
}
