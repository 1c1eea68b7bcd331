package bundle

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// ResignDir is the directory of the site where Import writes the locally
// signed index (WithResignKey).
const ResignDir = "mirror"

// resign writes SITE/mirror/index.yaml and its signature: the bundled
// versions with every chart reference moved to the mirror (a new spec
// digest each, so delegated signatures are dropped), the upstream index's
// generated and expiry times, signed by signers.
func resign(site string, v *trust.Verified, pkgs []Package, host, mpath string, signers []trust.Signer) error {
	b := index.NewBuilder()
	for _, p := range pkgs {
		ip, iv := v.Index.Packages[p.Name], v.Index.Find(p.Name, p.Version, p.Build)
		if iv != nil {
			// A deep copy of the spec, through its JSON form.
			raw, err := json.Marshal(iv.Spec)
			if err != nil {
				return err
			}
			var sp spec.PackageSpec
			if err := json.Unmarshal(raw, &sp); err != nil {
				return err
			}
			for i := range sp.Variants {
				for j := range sp.Variants[i].Components {
					c := sp.Variants[i].Components[j].Chart
					if c == nil {
						continue
					}
					rest := strings.TrimPrefix(c.Repository, "oci://")
					reg, path, _ := strings.Cut(rest, "/")
					c.Repository = "oci://" + host + "/" + MirrorPath(mpath, reg, path)
				}
			}
			rec := &spec.PackageSource{APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind,
				Metadata: spec.RecordMetadata{Name: p.Name, Annotations: map[string]string{}}, Spec: sp}
			if ip.Description != "" {
				rec.Metadata.Annotations[index.DescriptionAnnotation] = ip.Description
			}
			if ip.Home != "" {
				rec.Metadata.Annotations[index.HomeAnnotation] = ip.Home
			}
			if err := b.Add(p.Name+" "+p.Version, rec, nil); err != nil {
				return err
			}
		}
	}
	data, err := b.Marshal(v.Generated, v.Expires)
	if err != nil {
		return err
	}
	sigs, err := trust.Sign(data, signers...)
	if err != nil {
		return err
	}
	sig, err := index.MarshalSignatures(sigs)
	if err != nil {
		return err
	}
	dir := filepath.Join(site, ResignDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, sitelayout.IndexFile), data, 0o644); err != nil {
		return fmt.Errorf("re-signed index: %w", err)
	}
	return atomicfile.WriteFile(filepath.Join(dir, sitelayout.SignatureFile), sig, 0o644)
}
