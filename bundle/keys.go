package bundle

import (
	"context"
	"encoding/base64"
	"errors"
	"maps"
	"slices"
	"strings"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// maxKeyFile caps a public key file fetched from a site.
const maxKeyFile = 64 << 10

// fetchSignerKeys adds to files the public keys the site publishes beside
// its index for the signatures of index.yaml.sig (keys/<keyid>.pub, or
// keys/index.pub for a signature that names no keyid), when it has them.
// They travel as information for Inspect, which has no keys of its own;
// Import trusts only the keys it is given.
func fetchSignerKeys(ctx context.Context, s *siteread.Site, files map[string][]byte) error {
	sigs, err := index.ParseSignatures(files[sitelayout.SignatureFile])
	if err != nil {
		return nil // a root-signed index may have none here; Verify passed
	}
	want := map[string]bool{}
	for _, sg := range sigs {
		if sg.KeyID != "" {
			want["keys/"+sg.KeyID+".pub"] = true
		} else {
			want["keys/index.pub"] = true
		}
	}
	for _, f := range slices.Sorted(maps.Keys(want)) {
		b, err := s.Fetch(ctx, f, maxKeyFile)
		if errors.Is(err, siteread.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if _, err := trust.ParsePublicKey(b); err != nil {
			continue // not a key: leave it out
		}
		files[f] = b
	}
	return nil
}

// IndexSigner is a key that signed the bundled index, as Inspect finds it
// without trusting anything: the keyid index.yaml.sig names, or the one of
// a key the bundle carries (KeyFile) or its root's index role names whose
// signature of the index checks out.
type IndexSigner struct {
	KeyID   string `json:"keyid"`
	KeyFile string `json:"keyFile,omitempty"`
	// Checked is whether the signature was checked against that key
	// (false: only named by index.yaml.sig).
	Checked bool `json:"checked"`
}

// indexSigners finds who signed the bundled index.
func indexSigners(files map[string][]byte, root *trust.Root) ([]IndexSigner, error) {
	sigs, err := index.ParseSignatures(files[sitelayout.SignatureFile])
	if err != nil {
		return nil, err
	}
	type candidate struct {
		key  *trust.PublicKey
		file string
	}
	var keys []candidate
	for _, f := range slices.Sorted(maps.Keys(files)) {
		if strings.HasPrefix(f, "keys/") {
			if k, err := trust.ParsePublicKey(files[f]); err == nil {
				keys = append(keys, candidate{k, f})
			}
		}
	}
	if root != nil {
		if role, ok := root.Signed.Roles[trust.RoleIndex]; ok {
			for _, id := range role.KeyIDs {
				if k, err := trust.ParsePublicKey([]byte(root.Signed.Keys[id])); err == nil {
					keys = append(keys, candidate{k, sitelayout.RootFile})
				}
			}
		}
	}
	var out []IndexSigner
	for _, sg := range sigs {
		raw, err := base64.StdEncoding.DecodeString(sg.Sig)
		if err != nil {
			continue
		}
		found := IndexSigner{KeyID: sg.KeyID}
		for _, c := range keys {
			if (sg.KeyID == "" || sg.KeyID == c.key.KeyID()) && c.key.Verify(files[sitelayout.IndexFile], raw) {
				found = IndexSigner{KeyID: c.key.KeyID(), KeyFile: c.file, Checked: true}
				break
			}
		}
		out = append(out, found)
	}
	return out, nil
}
