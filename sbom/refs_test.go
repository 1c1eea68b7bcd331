package sbom

import (
	"encoding/json"
	"strings"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// A version whose BOM file the site no longer holds is referenced through
// the charts it is an OCI referrer of; one with neither is an error.
func TestRepositoryRefsReferrers(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	chart := "oci://ghcr.io/acme/packages/alpha/alpha:1.0.0"
	for _, tc := range []struct {
		name    string
		v       VersionBOM
		want    []string // external reference URLs
		wantErr string
	}{
		{"file", VersionBOM{Name: "alpha", Version: "1.0.0", Build: 1, Digest: digest, BOM: "sbom/alpha-1.0.0-1.cdx.json", Referrers: []string{chart}}, []string{"sbom/alpha-1.0.0-1.cdx.json"}, ""},
		{"referrers", VersionBOM{Name: "alpha", Version: "1.0.0", Build: 1, Digest: digest, Referrers: []string{chart, chart + "-b"}}, []string{chart, chart + "-b"}, ""},
		{"neither", VersionBOM{Name: "alpha", Version: "1.0.0", Build: 1, Digest: digest}, nil, "alpha 1.0.0 build 1: neither a BOM file nor a chart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bom, err := ForRepositoryRefs("index.yaml", []VersionBOM{tc.v}, WithTimestamp(epoch))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ForRepositoryRefs = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			data := marshalValid(t)(bom, err)
			var got cdx.BOM
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			refs := *(*got.Components)[0].ExternalReferences
			if len(refs) != len(tc.want) {
				t.Fatalf("external references %+v, want %v", refs, tc.want)
			}
			for i, r := range refs {
				if r.Type != cdx.ERTypeBOM || r.URL != tc.want[i] {
					t.Errorf("reference %d = %s %s, want bom %s", i, r.Type, r.URL, tc.want[i])
				}
				if strings.HasPrefix(r.URL, "oci://") != strings.Contains(r.Comment, "OCI referrer, artifactType "+ReferrerArtifactType) {
					t.Errorf("reference %s: comment %q, want one naming the referrer's artifactType for a chart only", r.URL, r.Comment)
				}
			}
		})
	}
}
