package testenv

import (
	"io"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Referrer is one referrer of a manifest: its artifactType, its manifest
// digest and the content of its one layer.
type Referrer struct {
	ArtifactType, Digest string
	Payload              []byte
}

// Referrers returns what the registry lists as referrers of subject, as
// a client reads them: the registry's referrers API, then each referrer
// by digest and its one layer. A referrer with other than one layer fails
// the test.
func Referrers(t testing.TB, subject name.Digest) []Referrer {
	t.Helper()
	idx, err := remote.Referrers(subject)
	if err != nil {
		t.Fatalf("referrers of %s: %v", subject, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var out []Referrer
	for _, d := range m.Manifests {
		img, err := remote.Image(subject.Context().Digest(d.Digest.String()))
		if err != nil {
			t.Fatalf("referrer %s of %s: %v", d.Digest, subject, err)
		}
		layers, err := img.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("referrer %s of %s: %d layers, %v", d.Digest, subject, len(layers), err)
		}
		rc, err := layers[0].Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Referrer{ArtifactType: d.ArtifactType, Digest: d.Digest.String(), Payload: b})
	}
	return out
}
