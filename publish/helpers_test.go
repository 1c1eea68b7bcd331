package publish

import (
	"errors"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/trust"
)

// signatureFileOf signs data with every signer and returns the content of
// its .sig file.
func signatureFileOf(data []byte, signers []trust.Signer) ([]byte, error) {
	if len(signers) == 0 {
		return nil, errors.New("no signing key")
	}
	sigs, err := trust.Sign(data, signers...)
	if err != nil {
		return nil, err
	}
	return index.MarshalSignatures(sigs)
}
