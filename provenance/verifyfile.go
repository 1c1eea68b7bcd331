package provenance

import (
	"fmt"
	"os"

	"kbuild.dev/kbuild/trust"
)

// VerifyArchiveFile is VerifyArchive on files, as kbuild
// verify-provenance checks them: the chart archive, the provenance
// envelope and the public key files trusted to have signed it, read in
// that order. A refusal names the provenance file.
func VerifyArchiveFile(archive, provenance string, keyFiles []string) (*Statement, *trust.PublicKey, error) {
	data, err := os.ReadFile(archive)
	if err != nil {
		return nil, nil, err
	}
	envelope, err := os.ReadFile(provenance)
	if err != nil {
		return nil, nil, err
	}
	keys, err := trust.LoadPublicKeys(keyFiles, false)
	if err != nil {
		return nil, nil, err
	}
	st, key, err := VerifyArchive(data, envelope, keys)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", provenance, err)
	}
	return st, key, nil
}
