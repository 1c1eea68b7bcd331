// Package kubepkgclient is a test helper, an independent encoding of
// kubepkg's client rules in two parts: how a subscriber decides whether to
// accept a published index and its signature (this file: LoadWithRoot,
// VerifyWithKeys), and what a cluster then does with the index (model.go:
// Index, Install, Cluster). The first is encoded from
// kubepkg's own client code (tym83/kubepkg pkg/repo: trust.go
// LoadIndexWithRoot, Bootstrap, Update, VerifyIndex, countValid and
// parseSignatures; sign.go Verify; index.go LoadIndex) and independent of
// kbuild's trust and index packages, so that tests judge kbuild's reader
// and writer against the client, not against themselves.
//
// The rules, as kubepkg has them:
//
//   - The signature is fetched from the index URL plus ".sig"
//     (index.yaml.sig) and from nowhere else; a missing one refuses the index.
//   - A signature file is a YAML list (signatures: [{keyid, sig}]) or one
//     plain base64 signature, which names no key; anything else refuses it.
//   - With plain public keys (no root), any one signature of the file
//     that verifies with any one of the keys is enough, whatever keyid it
//     names.
//   - With a root, root/1.yaml must carry the pinned threshold and its own
//     root role's threshold; root/N+1.yaml the threshold of root N's root
//     role and of its own; root.yaml names N. The index counts only
//     signatures naming a key of the newest root's index role (a keyed
//     one) or verifying with one (a plain one), each key once, up to the
//     index role's threshold: a root key, or an index key of an earlier
//     root, does not count. Several signatures in one file are fine; those
//     that do not verify are skipped. The index must have expires, and
//     neither it nor the root may have expired.
//
// Delegations are not encoded: the test roots have none.
package kubepkgclient

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// ErrRefused is wrapped by every refusal.
var ErrRefused = errors.New("kubepkg refuses the index")

func refused(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// Signature is one entry of a signature file.
type Signature struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig"`
}

type signatureFile struct {
	Signatures []Signature `json:"signatures"`
}

// role and root mirror kubepkg's Root: the field order is what the
// signatures cover (encoding/json of the struct).
type role struct {
	KeyIDs    []string `json:"keyids"`
	Threshold int      `json:"threshold"`
}

type root struct {
	Version int               `json:"version"`
	Expires time.Time         `json:"expires"`
	Keys    map[string]string `json:"keys"`
	Roles   map[string]role   `json:"roles"`
}

type signedRoot struct {
	Signed     root        `json:"signed"`
	Signatures []Signature `json:"signatures"`
}

// ParseSignatures reads a signature file as kubepkg does: a non-empty
// YAML list, else one plain base64 signature without a keyid; empty text
// gives no signatures.
func ParseSignatures(b []byte) ([]Signature, error) {
	text := strings.TrimSpace(string(b))
	if text == "" {
		return nil, nil
	}
	var f signatureFile
	if yaml.Unmarshal(b, &f) == nil && len(f.Signatures) > 0 {
		return f.Signatures, nil
	}
	if _, err := base64.StdEncoding.DecodeString(text); err != nil {
		return nil, refused("signature file: neither a list of signatures nor a plain signature")
	}
	return []Signature{{Sig: text}}, nil
}

func parseKey(p string) (ed25519.PublicKey, error) {
	block, _ := pem.Decode([]byte(p))
	if block == nil {
		return nil, errors.New("public key is not PEM")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, errors.New("public key is not ed25519")
	}
	return pub, nil
}

// VerifyWithKeys is kubepkg's check of an index against plain public keys
// (PEM): one signature by one of the keys, keyids ignored.
func VerifyWithKeys(index, sigFile []byte, keyPEMs []string) error {
	if sigFile == nil {
		return refused("no signature at index.yaml.sig")
	}
	var keys []ed25519.PublicKey
	for _, p := range keyPEMs {
		k, err := parseKey(p)
		if err != nil {
			return err
		}
		keys = append(keys, k)
	}
	var list signatureFile
	if yaml.Unmarshal(sigFile, &list) == nil && len(list.Signatures) > 0 {
		for _, s := range list.Signatures {
			raw, err := base64.StdEncoding.DecodeString(s.Sig)
			if err != nil {
				continue
			}
			for _, k := range keys {
				if ed25519.Verify(k, index, raw) {
					return nil
				}
			}
		}
		return refused("index is not signed by a trusted key")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(sigFile)))
	if err != nil {
		return refused("signature is not base64")
	}
	for _, k := range keys {
		if ed25519.Verify(k, index, raw) {
			return nil
		}
	}
	return refused("index is not signed by a trusted key")
}

// countValid counts the distinct keys of r that signed data.
func countValid(data []byte, sigs []Signature, keys map[string]string, r role) int {
	allowed := map[string]bool{}
	for _, id := range r.KeyIDs {
		allowed[id] = true
	}
	seen := map[string]bool{}
	for _, s := range sigs {
		raw, err := base64.StdEncoding.DecodeString(s.Sig)
		if err != nil {
			continue
		}
		if s.KeyID == "" {
			for _, id := range r.KeyIDs {
				pub, err := parseKey(keys[id])
				if err == nil && !seen[id] && ed25519.Verify(pub, data, raw) {
					seen[id] = true
					break
				}
			}
			continue
		}
		if !allowed[s.KeyID] || seen[s.KeyID] {
			continue
		}
		if pub, err := parseKey(keys[s.KeyID]); err == nil && ed25519.Verify(pub, data, raw) {
			seen[s.KeyID] = true
		}
	}
	return len(seen)
}

func meets(data []byte, sigs []Signature, keys map[string]string, r role, what string) error {
	if n := countValid(data, sigs, keys, r); n < r.Threshold {
		return refused("%s has %d valid signatures, needs %d", what, n, r.Threshold)
	}
	return nil
}

// Fetch returns a file of the site by its name ("index.yaml",
// "root/2.yaml"), or an error wrapping os.ErrNotExist.
type Fetch func(name string) ([]byte, error)

// Dir fetches from a site directory.
func Dir(dir string) Fetch {
	return func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, filepath.FromSlash(name))) }
}

func parseRoot(b []byte) (*signedRoot, error) {
	var sr signedRoot
	if err := yaml.Unmarshal(b, &sr); err != nil {
		return nil, refused("root: %v", err)
	}
	if sr.Signed.Version < 1 {
		return nil, refused("not a root")
	}
	return &sr, nil
}

// LoadWithRoot is kubepkg's LoadIndexWithRoot: the root chain from the
// pinned root keys (PEM) and threshold, then index.yaml against the index
// role of the newest root, at now.
func LoadWithRoot(fetch Fetch, pinned []string, threshold int, now time.Time) error {
	get := func(name string) (*signedRoot, error) {
		b, err := fetch(name)
		if err != nil {
			return nil, refused("%s: %v", name, err)
		}
		return parseRoot(b)
	}
	latest, err := get("root.yaml")
	if err != nil {
		return err
	}
	first, err := get("root/1.yaml")
	if err != nil {
		return err
	}
	if first.Signed.Version != 1 {
		return refused("bootstrap needs root version 1, got %d", first.Signed.Version)
	}
	keys := map[string]string{}
	var ids []string
	for _, p := range pinned {
		block, _ := pem.Decode([]byte(p))
		if block == nil {
			return errors.New("pinned key is not PEM")
		}
		id := keyID(block.Bytes)
		keys[id] = p
		ids = append(ids, id)
	}
	threshold = max(threshold, 1)
	data, err := json.Marshal(first.Signed)
	if err != nil {
		return err
	}
	if err := meets(data, first.Signatures, keys, role{KeyIDs: ids, Threshold: threshold}, "root version 1 (pinned keys)"); err != nil {
		return err
	}
	if err := meets(data, first.Signatures, first.Signed.Keys, first.Signed.Roles["root"], "root version 1"); err != nil {
		return err
	}
	trusted := first.Signed
	for v := 2; v <= latest.Signed.Version; v++ {
		next, err := get(fmt.Sprintf("root/%d.yaml", v))
		if err != nil {
			return err
		}
		if next.Signed.Version != trusted.Version+1 {
			return refused("root version %d does not follow %d", next.Signed.Version, trusted.Version)
		}
		data, err := json.Marshal(next.Signed)
		if err != nil {
			return err
		}
		if err := meets(data, next.Signatures, trusted.Keys, trusted.Roles["root"], fmt.Sprintf("root version %d (by version %d keys)", v, trusted.Version)); err != nil {
			return err
		}
		if err := meets(data, next.Signatures, next.Signed.Keys, next.Signed.Roles["root"], fmt.Sprintf("root version %d (by its own keys)", v)); err != nil {
			return err
		}
		trusted = next.Signed
	}
	raw, err := fetch("index.yaml")
	if err != nil {
		return refused("index.yaml: %v", err)
	}
	sig, err := fetch("index.yaml.sig")
	if err != nil {
		return refused("no signature at index.yaml.sig: %v", err)
	}
	var idx struct {
		Kind    string     `json:"kind"`
		Expires *time.Time `json:"expires"`
	}
	if err := yaml.Unmarshal(raw, &idx); err != nil || idx.Kind != "RepositoryIndex" {
		return refused("index is not valid (kind %q, %v)", idx.Kind, err)
	}
	if now.After(trusted.Expires) {
		return refused("root version %d expired", trusted.Version)
	}
	sigs, err := ParseSignatures(sig)
	if err != nil {
		return err
	}
	if err := meets(raw, sigs, trusted.Keys, trusted.Roles["index"], "index"); err != nil {
		return err
	}
	if idx.Expires == nil {
		return refused("a repository with a root must give its index an expiry")
	}
	if now.After(*idx.Expires) {
		return refused("index expired")
	}
	return nil
}

// keyID is kubepkg's keyid of a key: the hex sha256 of its PKIX DER.
func keyID(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}
