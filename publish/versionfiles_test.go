package publish

import (
	"bytes"
	"context"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

	"kbuild.dev/kbuild/provenance"
	"kbuild.dev/kbuild/sitelayout"
)

// VersionFiles and ProvenanceFor are what Publish writes for a version it
// built, byte for byte (bench/index writes a 100,000-version site with
// them), and the files are compact.
func TestVersionFilesAreWhatPublishWrites(t *testing.T) {
	f := newLayoutFixture(t)
	f.recipe("alpha", "1.0.0", 1)
	res, err := f.publish("site", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Built) != 1 {
		t.Fatalf("built %d versions, want 1", len(res.Built))
	}
	r := res.Built[0]
	files, err := VersionFiles(context.Background(), &r.Record, &r.Info, f.epoch, "kbuild", "test")
	if err != nil {
		t.Fatal(err)
	}
	id, invocation := provenance.BuilderIdentity(func(string) string { return "" })
	prov, err := ProvenanceFor(&r.Info, id, invocation, f.epoch, f.key)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{sitelayout.BuildInfoFile("alpha", "1.0.0", 1), sitelayout.SBOMFile("alpha", "1.0.0", 1), sitelayout.ProvenanceFile("alpha", "1.0.0", 1)}
	all := append(files, prov)
	if len(all) != len(want) {
		t.Fatalf("VersionFiles + ProvenanceFor gave %d files, want %d", len(all), len(want))
	}
	for i, sf := range all {
		if sf.Path != want[i] {
			t.Errorf("file %d is %s, want %s", i, sf.Path, want[i])
		}
		site, err := os.ReadFile(filepath.Join(f.work, "site", filepath.FromSlash(sf.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(site, sf.Data) {
			t.Errorf("%s in the site differs from what %s returns:\nsite %s\nfunc %s", sf.Path, map[bool]string{true: "ProvenanceFor", false: "VersionFiles"}[i == 2], site, sf.Data)
		}
		if i > 0 && bytes.Count(sf.Data, []byte("\n")) != 1 {
			t.Errorf("%s is not compact JSON with one final newline:\n%s", sf.Path, sf.Data)
		}
	}
	pub, err := x509.MarshalPKIXPublicKey(f.key.Public().Key())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := provenance.Verify(prov.Data, pub, r.Info.Charts[0].Digest); err != nil {
		t.Errorf("provenance.Verify of %s = %v", prov.Path, err)
	}
}
