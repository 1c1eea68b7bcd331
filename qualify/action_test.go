package qualify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// signedSite writes x, signed by key, as a site in a new directory.
func signedSite(t *testing.T, x *index.RepositoryIndex, key *trust.PrivateKey) string {
	t.Helper()
	data, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := trust.Sign(data, key)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := index.MarshalSignatures(sigs)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.yaml.sig"), sig, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTestAction: the evidence signers are checked against the root before
// the index is read, the index is verified before anything is listed or
// installed, and --untested lists what no evidence covers.
func TestTestAction(t *testing.T) {
	key, err := trust.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := trust.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	v := func(version string, build int) index.IndexVersion {
		s := spec.PackageSpec{Version: version, Build: build, Variants: []spec.Variant{{Name: "default"}}}
		d, err := s.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return index.IndexVersion{Version: version, Build: build, Digest: d, Spec: s}
	}
	now := time.Now().UTC().Truncate(time.Second)
	site := signedSite(t, &index.RepositoryIndex{APIVersion: index.IndexAPIVersion, Kind: index.IndexKind, Generated: now, Expires: now.Add(time.Hour),
		Packages: map[string]*index.IndexPackage{"web": {Versions: []index.IndexVersion{v("1.1.0", 1), v("1.0.0", 1)}}}}, key)
	evidence := t.TempDir()
	os.MkdirAll(filepath.Join(evidence, "web-1.0.0-1"), 0o755)
	os.WriteFile(filepath.Join(evidence, "web-1.0.0-1", "kubernetes=1.37.intoto.json"), []byte("{}"), 0o644)
	for _, tc := range []struct {
		name     string
		a        Test
		untested string
		err      string
	}{
		{name: "untested", a: Test{Index: site, Trust: trust.SignedBy(key), Untested: evidence}, untested: "web 1.1.0 build 1"},
		{name: "index signed by another key", a: Test{Index: site, Trust: trust.SignedBy(stranger), Untested: evidence}, err: "refused"},
		{name: "root before index", a: Test{Index: filepath.Join(site, "nosuch"), Trust: trust.SignedBy(key), Root: filepath.Join(site, "root.yaml"),
			Output: Output{Evidence: "out.json", Signers: []trust.Signer{key}}}, err: "root.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.a.Run(t.Context())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Run = %v, want an error containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, u := range res.Untested {
				s = append(s, u.String())
			}
			if got := strings.Join(s, ", "); got != tc.untested {
				t.Errorf("Untested = %s, want %s", got, tc.untested)
			}
		})
	}
}
