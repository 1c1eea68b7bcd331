package evidence

import (
	"fmt"
	"slices"

	"kbuild.dev/kbuild/trust"
)

// CheckQASigners checks that every signer is a key of the qa role of root
// (named file in messages), so that the evidence they sign counts; it
// returns how many qa signatures they make and how many the role needs.
// A root without a qa role, or a signer outside it, is an error saying
// what to do.
func CheckQASigners(root *trust.Root, file string, signers []trust.Signer) (have, need int, err error) {
	qa, ok := root.Signed.Roles[trust.RoleQA]
	if !ok {
		return 0, 0, fmt.Errorf("root %s (version %d) %w: no evidence would count", file, root.Signed.Version, ErrNoQARole)
	}
	for _, s := range signers {
		if !slices.Contains(qa.KeyIDs, s.KeyID()) {
			return 0, 0, fmt.Errorf("key %s is not in the qa role of root %s (version %d): its evidence would not count; sign with a qa key", s.KeyID(), file, root.Signed.Version)
		}
	}
	return len(signers), qa.Threshold, nil
}
