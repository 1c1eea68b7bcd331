package trust

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
	"sort"
)

// Sign signs message with every signer, in order.
func Sign(message []byte, signers ...Signer) ([]index.Signature, error) {
	if len(signers) == 0 {
		return nil, errors.New("no signing key given")
	}
	out := make([]index.Signature, 0, len(signers))
	for _, s := range signers {
		sig, err := s.Sign(message)
		if err != nil {
			return nil, fmt.Errorf("sign with key %s: %w", s.KeyID(), err)
		}
		out = append(out, index.Signature{KeyID: s.KeyID(), Sig: base64.StdEncoding.EncodeToString(sig)})
	}
	return out, nil
}

// checkSignatures counts the distinct keys among keys whose signature of
// message is in sigs. A signature without a keyid (the one-key file form)
// is tried with every key. It returns the keyids that signed, sorted.
func checkSignatures(message []byte, sigs []index.Signature, keys []Verifier) []string {
	byID := make(map[string]Verifier, len(keys))
	for _, k := range keys {
		byID[k.KeyID()] = k
	}
	signed := map[string]bool{}
	for _, s := range sigs {
		raw, err := base64.StdEncoding.Strict().DecodeString(s.Sig)
		if err != nil {
			continue
		}
		if s.KeyID == "" {
			for _, k := range keys {
				if !signed[k.KeyID()] && k.Verify(message, raw) {
					signed[k.KeyID()] = true
				}
			}
			continue
		}
		if k, ok := byID[s.KeyID]; ok && !signed[s.KeyID] && k.Verify(message, raw) {
			signed[s.KeyID] = true
		}
	}
	out := make([]string, 0, len(signed))
	for id := range signed {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// VersionStatementType is the type of the statement a delegated key signs
// for one package version.
const VersionStatementType = "kubepkg.dev/package-version"

// VersionStatement returns the bytes a delegated key signs for one version
// of a package: the compact JSON
// {"type":"kubepkg.dev/package-version","package":…,"version":…,"build":…,"digest":…}.
func VersionStatement(pkg, version string, build int, digest string) []byte {
	b, err := json.Marshal(struct {
		Type    string `json:"type"`
		Package string `json:"package"`
		Version string `json:"version"`
		Build   int    `json:"build"`
		Digest  string `json:"digest"`
	}{VersionStatementType, pkg, version, build, digest})
	if err != nil {
		panic(err) // strings and an int always marshal
	}
	return b
}

// SignVersion signs the version statement of rec's package version with
// signer, for a delegation's threshold.
func SignVersion(rec *spec.PackageSource, signer Signer) (index.Signature, error) {
	d, err := rec.Spec.Digest()
	if err != nil {
		return index.Signature{}, err
	}
	sigs, err := Sign(VersionStatement(rec.Metadata.Name, rec.Spec.Version, rec.Spec.Build, d), signer)
	if err != nil {
		return index.Signature{}, err
	}
	return sigs[0], nil
}
