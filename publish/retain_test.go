package publish

import (
	"fmt"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"kbuild.dev/kbuild/index"
)

func TestRetain(t *testing.T) {
	vs := func(s ...string) []index.IndexVersion {
		var out []index.IndexVersion
		for _, x := range s {
			var v string
			var b int
			fmt.Sscanf(strings.Replace(x, "+", " ", 1), "%s %d", &v, &b)
			out = append(out, index.IndexVersion{Version: v, Build: b})
		}
		return out
	}
	str := func(x []index.IndexVersion) string {
		var s []string
		for _, v := range x {
			s = append(s, fmt.Sprintf("%s+%d", v.Version, v.Build))
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		name        string
		in          []index.IndexVersion
		keep        int
		kept, older string
	}{
		{"every version with 0", vs("1.0.0+1", "2.0.0+1"), 0, "2.0.0+1 1.0.0+1", ""},
		{"fewer than keep", vs("1.0.0+1", "2.0.0+1"), 10, "2.0.0+1 1.0.0+1", ""},
		{"newest first, semver not text", vs("1.9.0+1", "1.10.0+1", "1.2.0+1"), 2, "1.10.0+1 1.9.0+1", "1.2.0+1"},
		{"builds count as versions", vs("1.0.0+1", "1.0.0+2", "1.0.0+3"), 1, "1.0.0+3", "1.0.0+2 1.0.0+1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := str(tc.in)
			kept, older := Retain(tc.in, tc.keep)
			if str(kept) != tc.kept || str(older) != tc.older {
				t.Errorf("Retain(%s, %d) = [%s] [%s], want [%s] [%s]", in, tc.keep, str(kept), str(older), tc.kept, tc.older)
			}
			if str(tc.in) != in {
				t.Errorf("Retain reordered its input: %s, was %s", str(tc.in), in)
			}
		})
	}
}

// The SBOM referrer of a chart is a function of the SBOM's bytes: the
// same SBOM attached again is the same manifest, created at the SBOM's
// timestamp.
func TestSBOMReferrer(t *testing.T) {
	subject := v1.Descriptor{MediaType: types.OCIManifestSchema1, Size: 512, Digest: v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}}
	bom := func(ts string) []byte {
		return []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","metadata":{"timestamp":"` + ts + `"}}` + "\n")
	}
	digest := func(data []byte) (string, error) {
		img, err := SBOMReferrer(subject, data)
		if err != nil {
			return "", err
		}
		d, err := img.Digest()
		return d.String(), err
	}
	a, err := digest(bom("2026-12-01T10:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := digest(bom("2026-12-01T10:00:00Z")); b != a {
		t.Errorf("the same SBOM gave referrers %s and %s", a, b)
	}
	if c, _ := digest(bom("2026-12-01T11:00:00Z")); c == a {
		t.Errorf("SBOMs of other timestamps gave the same referrer %s", a)
	}
	img, _ := SBOMReferrer(subject, bom("2026-12-01T10:00:00Z"))
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Annotations["org.opencontainers.image.created"]; got != "2026-12-01T10:00:00Z" {
		t.Errorf("created = %q, want the SBOM's timestamp", got)
	}
	if m.Subject == nil || m.Subject.Digest != subject.Digest || m.Layers[0].MediaType != SBOMArtifactType {
		t.Errorf("manifest %+v: want subject %s and one %s layer", m, subject.Digest, SBOMArtifactType)
	}
	for _, bad := range [][]byte{[]byte("not json"), bom("yesterday")} {
		if _, err := SBOMReferrer(subject, bad); err == nil {
			t.Errorf("SBOMReferrer(%q) = nil error, want one", bad)
		}
	}
}
