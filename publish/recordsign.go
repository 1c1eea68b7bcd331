package publish

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// SignRecord signs the version statement of the build record in file —
// package, version, build and spec digest — with each of keys (a
// delegated team's keys) and adds the signatures to the record's sidecar
// (see dist.SidecarPath), replacing earlier ones by the same keys;
// repo index carries them into the version's signatures. It returns the
// record, the sidecar's path and how many signatures it now holds. The
// record is checked first; the sidecar is written whole or not at all.
func SignRecord(file string, keys ...trust.Signer) (rec *spec.PackageSource, sidecar string, n int, err error) {
	if len(keys) == 0 {
		return nil, "", 0, errors.New("signing a record needs a key")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, "", 0, err
	}
	if rec, err = index.ParseRecord(data); err != nil {
		return nil, "", 0, fmt.Errorf("%s: %w", file, err)
	}
	if err := index.CheckRecord(rec); err != nil {
		return nil, "", 0, fmt.Errorf("%s: %w", file, err)
	}
	sidecar = dist.SidecarPath(file)
	var sigs []index.Signature
	if b, err := os.ReadFile(sidecar); err == nil {
		if sigs, err = index.ParseSignatures(b); err != nil {
			return nil, "", 0, fmt.Errorf("%s: %w", sidecar, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, "", 0, err
	}
	for _, k := range keys {
		sig, err := trust.SignVersion(rec, k)
		if err != nil {
			return nil, "", 0, err
		}
		sigs = index.AddSignature(sigs, sig)
	}
	out, err := index.MarshalSignatureList(sigs)
	if err != nil {
		return nil, "", 0, err
	}
	if err := atomicfile.WriteFile(sidecar, out, 0o644); err != nil {
		return nil, "", 0, err
	}
	return rec, sidecar, len(sigs), nil
}
