package options

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRegistryConfigFlag checks that --registry-config names itself in
// its errors (the credentials it reads are tested in sources).
func TestRegistryConfigFlag(t *testing.T) {
	if _, err := (&SourceFlags{RegistryConfig: filepath.Join(t.TempDir(), "missing.json")}).Keychain(); err == nil || !strings.Contains(err.Error(), "--registry-config") {
		t.Errorf("missing file: %v", err)
	}
}

// TestMergeTrustWithoutIndex: without --index there is no base to verify,
// whatever else is given.
func TestMergeTrustWithoutIndex(t *testing.T) {
	for _, f := range []MergeFlags{{}, {SelfTrust: true}, {IndexRootFlag: IndexRootFlag{IndexRoot: "nosuch/root.yaml"}}} {
		if tr, err := f.MergeTrust(nil); tr != nil || err != nil {
			t.Errorf("%+v.MergeTrust(nil) = %v, %v; want nil, nil", f, tr, err)
		}
	}
	f := MergeFlags{IndexFlags: IndexFlags{Ref: "site"}, IndexRootFlag: IndexRootFlag{IndexRoot: "nosuch/root.yaml"}}
	if _, err := f.MergeTrust(nil); err == nil {
		t.Errorf("MergeTrust with --index and a missing --index-root = nil, want an error")
	}
}
