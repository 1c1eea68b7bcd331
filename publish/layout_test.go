package publish

import (
	"testing"

	"kbuild.dev/kbuild/sitelayout"
)

// TestLayout pins the site's file names: subscribers, the catalog and
// published SBOMs refer to them, so they never change.
func TestLayout(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{sitelayout.SBOMFile("kubevirt", "1.9.0", 4), "sbom/kubevirt-1.9.0-4.cdx.json"},
		{sitelayout.ProvenanceFile("kubevirt", "1.9.0", 4), "provenance/kubevirt-1.9.0-4.intoto.json"},
		{sitelayout.BuildInfoFile("kubevirt", "1.9.0", 4), "build/kubevirt-1.9.0-4.build.yaml"},
		{sitelayout.RootVersionFile(3), "root/3.yaml"},
		{sitelayout.KeyFile("ab12"), "keys/ab12.pub"},
		{sitelayout.ByHashSignatureFile([]byte("x")), "by-hash/sha256/2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881.sig"},
		{sitelayout.IndexFile + " " + sitelayout.SignatureFile + " " + sitelayout.RootFile + " " + sitelayout.RepositoryBOMFile, "index.yaml index.yaml.sig root.yaml sbom.cdx.json"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s, want %s", tc.got, tc.want)
		}
	}
}
