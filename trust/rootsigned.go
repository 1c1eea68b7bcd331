package trust

import (
	"fmt"
	"io"
	"slices"
)

// WriteSigned writes what signing r with signers did: on stderr a note
// for each signer that is not a root key of r (its signature counts only
// for the previous version's root keys), then on stdout how many
// signatures r now has.
func (r *Root) WriteSigned(stdout, stderr io.Writer, signers []Signer) error {
	for _, k := range signers {
		if !slices.Contains(r.Signed.Roles[RoleRoot].KeyIDs, k.KeyID()) {
			fmt.Fprintf(stderr, "note: key %s is not a root key of version %d; its signature counts only for the previous version's root keys\n", k.KeyID(), r.Signed.Version)
		}
	}
	_, err := fmt.Fprintf(stdout, "root version %d now has %d signatures\n", r.Signed.Version, len(r.Signatures))
	return err
}
