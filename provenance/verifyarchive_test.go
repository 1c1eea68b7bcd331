package provenance

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// TestVerifyArchive checks that the provenance of an archive is accepted
// with the key that signed it among others, and refused, naming each key,
// for another archive or without the signing key.
func TestVerifyArchive(t *testing.T) {
	archive := []byte("a chart archive")
	sum := sha256.Sum256(archive)
	info := *testInfo
	info.Charts = []spec.BuiltChart{{Name: "demo", Ref: "oci://r/demo/demo:1.0.0-2", Digest: "sha256:" + hex.EncodeToString(sum[:])}}
	signer, other := key(t), key(t)
	env, err := Sign(New(&info, "https://kbuild.dev/builders/local", "", time.Unix(1700000000, 0)), signer)
	if err != nil {
		t.Fatal(err)
	}
	st, by, err := VerifyArchive(archive, env, []*trust.PublicKey{other.Public(), signer.Public()})
	if err != nil || by.KeyID() != signer.KeyID() || st.Predicate.BuildDefinition.ExternalParameters.Package != "demo" {
		t.Fatalf("VerifyArchive(its archive, both keys) = %v, %v; want the statement signed by %s", by, err, signer.KeyID())
	}
	for name, tc := range map[string]struct {
		archive []byte
		keys    []*trust.PublicKey
	}{
		"another archive": {[]byte("other bytes"), []*trust.PublicKey{signer.Public()}},
		"another key":     {archive, []*trust.PublicKey{other.Public()}},
		"no key":          {archive, nil},
	} {
		_, _, err := VerifyArchive(tc.archive, env, tc.keys)
		if !errors.Is(err, ErrVerify) {
			t.Errorf("%s: VerifyArchive = %v, want ErrVerify", name, err)
		}
		for _, k := range tc.keys {
			if !strings.Contains(err.Error(), "key "+k.KeyID()) {
				t.Errorf("%s: VerifyArchive = %v, want it to name key %s", name, err, k.KeyID())
			}
		}
	}
}

func key(t *testing.T) *trust.PrivateKey {
	k, err := trust.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestVerifyArchiveFile: the archive, the envelope and the keys are read
// from files, each missing file is named, and a refusal names the
// provenance file.
func TestVerifyArchiveFile(t *testing.T) {
	dir := t.TempDir()
	archive := []byte("a chart archive")
	sum := sha256.Sum256(archive)
	info := *testInfo
	info.Charts = []spec.BuiltChart{{Name: "demo", Ref: "oci://r/demo/demo:1.0.0-2", Digest: "sha256:" + hex.EncodeToString(sum[:])}}
	signer, other := key(t), key(t)
	env, err := Sign(New(&info, "https://kbuild.dev/builders/local", "", time.Unix(1700000000, 0)), signer)
	if err != nil {
		t.Fatal(err)
	}
	file := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	chart, prov := file("demo.tgz", archive), file("demo.intoto.json", env)
	for _, k := range []struct {
		name string
		k    *trust.PrivateKey
	}{{"signer", signer}, {"other", other}} {
		if err := trust.WriteKeyPair(filepath.Join(dir, k.name), k.k); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name          string
		archive, prov string
		keys          []string
		err           string
		verify        bool
	}{
		{name: "signed", archive: chart, prov: prov, keys: []string{filepath.Join(dir, "other.pub"), filepath.Join(dir, "signer.pub")}},
		{name: "no archive", archive: missing, prov: prov, keys: []string{filepath.Join(dir, "signer.pub")}, err: missing},
		{name: "no provenance", archive: chart, prov: missing, keys: []string{filepath.Join(dir, "signer.pub")}, err: missing},
		{name: "no key file", archive: chart, prov: prov, keys: []string{missing}, err: missing},
		{name: "another key", archive: chart, prov: prov, keys: []string{filepath.Join(dir, "other.pub")}, err: prov + ": ", verify: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, by, err := VerifyArchiveFile(tc.archive, tc.prov, tc.keys)
			if tc.err == "" {
				if err != nil || by.KeyID() != signer.KeyID() || st == nil {
					t.Fatalf("VerifyArchiveFile = %v, %v; want the statement signed by %s", by, err, signer.KeyID())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || errors.Is(err, ErrVerify) != tc.verify {
				t.Errorf("VerifyArchiveFile = %v; want an error containing %q (ErrVerify %v)", err, tc.err, tc.verify)
			}
		})
	}
}
