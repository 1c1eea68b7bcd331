package bundle

import (
	"crypto/x509"
	"fmt"
	"strings"

	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/provenance"
	"kbuild.dev/kbuild/trust"
)

// indexKeys returns the keys trusted to sign the index: the given index
// keys, or the index role's keys of the verified root.
func indexKeys(tr *trust.Trust, v *trust.Verified) ([]*trust.PublicKey, error) {
	if v.Root == nil {
		return tr.IndexKeys, nil
	}
	var keys []*trust.PublicKey
	for _, id := range v.Root.Signed.Roles[trust.RoleIndex].KeyIDs {
		k, err := trust.ParsePublicKey([]byte(v.Root.Signed.Keys[id]))
		if err != nil {
			return nil, fmt.Errorf("root version %d: index key %s: %w", v.Root.Signed.Version, id, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// verifyProvenance checks every bundled provenance file: a DSSE envelope
// signed by a key trusted to sign the index, naming each chart archive its
// version pins. SBOMs and build info are not signed; they travel as
// information.
func verifyProvenance(b *opened, sel []Selected, keys []*trust.PublicKey) error {
	var ders [][]byte
	for _, k := range keys {
		der, err := x509.MarshalPKIXPublicKey(k.Key())
		if err != nil {
			return err
		}
		ders = append(ders, der)
	}
	for _, p := range sel {
		file := "provenance/" + dist.Key(p.Name, p.Version.Version, p.Version.Build) + ".intoto.json"
		env := b.files[file]
		if env == nil {
			continue
		}
		for _, va := range p.Version.Spec.Variants {
			for _, c := range va.Components {
				if c.Chart == nil {
					continue
				}
				var errs []string
				ok := false
				for _, der := range ders {
					_, err := provenance.Verify(env, der, c.Chart.Digest)
					if err == nil {
						ok = true
						break
					}
					errs = append(errs, err.Error())
				}
				if !ok {
					return bad(b.file, "%s (%s %s build %d, chart %s %s): %s", file, p.Name, p.Version.Version, p.Version.Build, c.Chart.Name, c.Chart.Digest, strings.Join(errs, "; "))
				}
			}
		}
	}
	return nil
}
