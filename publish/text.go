package publish

import (
	"fmt"
	"io"
	"strings"

	"kbuild.dev/kbuild/trust"
)

// WriteText writes what was written for a person, "wrote INDEX: N
// packages, M versions", and unless the index is unsigned the signature
// and the keyids of signers, the keys that signed it.
func (r *Result) WriteText(w io.Writer, signers []trust.Signer) error {
	fmt.Fprintf(w, "wrote %s: %d packages, %d versions\n", r.Index, r.Packages, r.Versions)
	if r.Unsigned {
		return nil
	}
	ids := trust.KeyIDs(signers)
	label := "keyid"
	if len(ids) > 1 {
		label = "keyids"
	}
	_, err := fmt.Fprintf(w, "signed %s.sig (%s %s)\n", r.Index, label, strings.Join(ids, ", "))
	return err
}

// WriteText writes the copy of the index at the site root for a person,
// naming the suite it is of.
func (r *MirrorResult) WriteText(w io.Writer, suite string) error {
	_, err := fmt.Fprintf(w, "wrote %s: suite %s, also served at the site root (rootSuite)\n", r.Index, suite)
	return err
}
