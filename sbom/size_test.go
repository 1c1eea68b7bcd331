package sbom

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// A site holds one BOM per version: these bounds are about bytes (issue
// 11: the whole site within 2.5 × index.yaml), and a BOM must stay valid
// CycloneDX 1.6 that still names every chart and image with its digest
// and purl.
func TestVersionBOMSize(t *testing.T) {
	all := loadBuilds(t, "testdata/dist")
	tests := []struct {
		key string
		max int // bytes; indented JSON with purl bom-refs was 9,585 and 2,726
	}{
		{"kubevirt-1.9.0-4", 5900}, // 5 images, 2 charts, 2 sources, BuildInfo
		{"kubevirt-1.8.2-1", 1800}, // no BuildInfo
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			b := find(t, all, tc.key)
			data := marshalValid(t)(ForBuild(context.Background(), b, WithTimestamp(epoch), WithTool("kbuild", "v0.1.0")))
			if len(data) > tc.max {
				t.Errorf("BOM of %s is %d bytes, want at most %d", tc.key, len(data), tc.max)
			}
			if strings.Contains(string(data), "\n ") || strings.Count(string(data), "\n") != 1 {
				t.Errorf("BOM of %s is not compact JSON with one final newline", tc.key)
			}
			var got cdx.BOM
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			byPURL := map[string]cdx.Component{}
			for _, c := range *got.Components {
				if c.PackageURL != "" {
					byPURL[c.PackageURL] = c
				}
			}
			var want []string // purl and sha256 of every chart and image
			for _, cr := range b.charts() {
				want = append(want, ociPURL(strings.TrimPrefix(cr.Repository, "oci://")+"/"+cr.Name, cr.Digest, ociTag(cr.Version))+" "+cr.Digest)
			}
			for _, img := range b.Spec.Images {
				r, err := parseImageRef(img)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, ociPURL(r.Name(), r.Digest, r.Tag)+" "+r.Digest)
			}
			for _, w := range want {
				purl, digest, _ := strings.Cut(w, " ")
				c, ok := byPURL[purl]
				if !ok {
					t.Errorf("BOM of %s has no component with purl %s", tc.key, purl)
					continue
				}
				if c.Hashes == nil || len(*c.Hashes) != 1 || "sha256:"+(*c.Hashes)[0].Value != digest {
					t.Errorf("component %s: hashes %v, want SHA-256 %s", purl, c.Hashes, digest)
				}
			}
		})
	}
}

// The repository BOM references each version's own BOM instead of
// inlining its charts, images and sources: about 400 bytes per version.
func TestRepositoryRefsSize(t *testing.T) {
	var versions []VersionBOM
	for i := range 100 {
		name := fmt.Sprintf("pkg-%02d", i%10)
		v := fmt.Sprintf("1.%d.0", i/10)
		versions = append(versions, VersionBOM{Name: name, Version: v, Build: 1, Digest: "sha256:" + strings.Repeat(fmt.Sprintf("%02x", i), 32), BOM: "sbom/" + name + "-" + v + "-1.cdx.json"})
	}
	data := marshalValid(t)(ForRepositoryRefs("index.yaml", versions, WithTimestamp(epoch), WithTool("kbuild", "v0.1.0")))
	if per := len(data) / len(versions); per > 400 {
		t.Errorf("repository BOM is %d bytes per version, want at most 400", per)
	}
	var got cdx.BOM
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if n := len(*got.Components); n != len(versions) {
		t.Fatalf("repository BOM has %d components, want one per version (%d)", n, len(versions))
	}
	for i, c := range *got.Components {
		v := versions[i]
		if c.Type != cdx.ComponentTypeApplication || c.Components != nil || c.PackageURL != "" {
			t.Errorf("component %s: type %s, nested %v, purl %q; want a package, nothing inlined", c.BOMRef, c.Type, c.Components, c.PackageURL)
		}
		if c.ExternalReferences == nil || len(*c.ExternalReferences) != 1 || (*c.ExternalReferences)[0].Type != cdx.ERTypeBOM || (*c.ExternalReferences)[0].URL != v.BOM {
			t.Errorf("component %s: external references %v, want one of type bom to %s", c.BOMRef, c.ExternalReferences, v.BOM)
		}
	}
}

// marshalValid returns a function that fails t on err, else encodes bom
// with Marshal and checks it against the CycloneDX 1.6 schema: call it
// as marshalValid(t)(ForBuild(…)).
func marshalValid(t *testing.T) func(*cdx.BOM, error) []byte {
	return func(bom *cdx.BOM, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		data, err := Marshal(bom)
		if err != nil {
			t.Fatal(err)
		}
		validateBOM(t, data)
		return data
	}
}
