package publish

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/sigbundle"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// TestAttachEvidence publishes a chart to the real registry, attaches
// signed test evidence to it and finds it among the chart's referrers
// beside its provenance, byte for byte.
func TestAttachEvidence(t *testing.T) {
	f := newFixture(t)
	f.recipe("alpha", "1.0.0", 1)
	if _, err := f.publish("site", nil); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pub, err := siteread.ReadIndex(ctx, filepath.Join(f.work, "site"), &trust.Trust{IndexKeys: []*trust.PublicKey{f.key.Public()}})
	if err != nil {
		t.Fatal(err)
	}
	target := evidence.Target{Package: "alpha", Version: "1.0.0", Build: 1}
	subjects, err := evidence.Subjects(pub.Verified.Index, target)
	if err != nil {
		t.Fatal(err)
	}
	st, err := evidence.New(evidence.Attestation{Target: target, Result: evidence.Pass, Env: map[string]string{"kubernetes": "1.33", "arch": "amd64"},
		Issued: f.epoch, Expires: f.epoch.AddDate(0, 1, 0)}, subjects)
	if err != nil {
		t.Fatal(err)
	}
	env, err := evidence.Sign(st, f.key)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := AttachEvidence(ctx, pub, []VersionRef{{"alpha", "1.0.0", 1}}, env, f.epoch, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 1 {
		t.Fatalf("attached to %v, want the one chart", refs)
	}
	subject, err := name.NewDigest(refs[0], name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	var all, cosign int
	found := 0
	for _, r := range testenv.Referrers(t, subject) {
		if r.ArtifactType == sigbundle.MediaType {
			cosign++ // the signature, SBOM and provenance for cosign
			continue
		}
		all++
		if string(r.Payload) == string(env) {
			found++
		}
	}
	if all != 3 || found != 1 || cosign != 3 {
		t.Fatalf("referrers of %s: %d (want provenance, SBOM and evidence), %d holding the evidence, %d Sigstore bundles (want 3)", refs[0], all, found, cosign)
	}
	if _, err := AttachEvidence(ctx, pub, []VersionRef{{"alpha", "2.0.0", 1}}, env, f.epoch, true, 0); err == nil || !strings.Contains(err.Error(), "alpha 2.0.0 build 1 is not in the index") {
		t.Fatalf("attaching to a version the index lacks: %v", err)
	}
}

// TestAttachEvidenceTimeout: a registry that accepts the connection and
// never answers fails the attachment after the timeout (attest --timeout),
// instead of hanging.
func TestAttachEvidenceTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	host := strings.TrimPrefix(srv.URL, "http://")
	c := spec.BuiltChart{Ref: "oci://" + host + "/charts/alpha:1.0.0-1", Manifest: "sha256:" + strings.Repeat("a", 64)}
	// The context outlives the timeout by far, and ends well before the
	// default (60 s) would: only the timeout given gives this error.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := attachOne(ctx, c, []byte("{}"), time.Unix(0, 0), true, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "timeout awaiting response headers") {
		t.Fatalf("attachOne to a registry that never answers: %v, want a response header timeout", err)
	}
}
