package options

import (
	"fmt"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/cli"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/trust"
)

// MergeFlags name the published index a new one is merged over (--index,
// once --merge), and what verifies it: --public-key (once
// --merge-public-key), --root-key, or --index-root (once --merge-root).
type MergeFlags struct {
	IndexFlags
	IndexRootFlag
	AllowNew bool
	// SelfTrust verifies the base with the public keys of the keys that
	// sign the new index when no key is named for it (CheckSigning).
	SelfTrust bool
}

// CheckSigning is Check for a command that signs an index with keys. It
// first reads what the environment adds to the flags: $KBUILD_ALLOW_NEW
// (true or 1) as --allow-new, and whether a signing key is given (by keys
// or $KBUILD_SIGN_KEY), in which case a base named without its keys is
// verified with the signing keys' public keys — the same key signs every
// publish.
func (f *MergeFlags) CheckSigning(env *cli.Env, keys *SignerFlags) error {
	switch env.Getenv(allowNewEnv) {
	case "1", "true":
		f.AllowNew = true
	}
	f.SelfTrust = keys.Given() || env.Getenv(signKeyEnv) != ""
	return f.Check()
}

// AddFlags adds --index with the trust flags, --index-root and
// --allow-new, and the old spellings --merge, --merge-public-key and
// --merge-root.
func (f *MergeFlags) AddFlags(fs *pflag.FlagSet) {
	f.IndexFlags.AddFlags(fs, "to keep every version of")
	f.IndexRootFlag.AddFlags(fs)
	fs.BoolVar(&f.AllowNew, "allow-new", false, "with --index, start a new index when the base does not exist")
	cli.AddAlias(fs, "merge", "", "index")
	cli.AddAlias(fs, "merge-public-key", "", "public-key")
	cli.AddAlias(fs, "merge-root", "", "index-root")
}

// Check returns a usage error unless --index has exactly one way to be
// verified (or no --index and nothing that needs one).
func (f *MergeFlags) Check() error {
	ways := 0
	for _, given := range []bool{len(f.PublicKeys) > 0, len(f.RootKeys) > 0, f.IndexRoot != ""} {
		if given {
			ways++
		}
	}
	switch {
	case f.Ref == "" && ways > 0:
		return cli.Usagef("--public-key, --root-key and --index-root verify the --index base: they need --index")
	case f.Ref != "" && ways > 1:
		return cli.Usagef("--index: give one of --public-key, --root-key or --index-root")
	case f.Ref != "" && ways == 0 && !f.SelfTrust:
		return cli.Usagef("--index %s: kbuild verifies the published index before it merges over it (kubepkg does not): add --public-key FILE (the public key that signed it), --root-key FILE (your pinned root keys) or --index-root FILE (your root.yaml); or sign with the key that signed it (--sign-key, or the PEM key in $KBUILD_SIGN_KEY) and its public key verifies the base", f.Ref)
	}
	return nil
}

// MergeTrust returns what the base index is verified with, and checks
// that the signing keys satisfy the root's index role; nil without
// --index.
func (f *MergeFlags) MergeTrust(signers []trust.Signer) (*trust.Trust, error) {
	switch {
	case f.Ref == "":
		return nil, nil
	case f.IndexRoot != "":
		root, _, err := publish.LoadRoot(f.IndexRoot, signers)
		if err != nil {
			return nil, fmt.Errorf("--index-root: %w", err)
		}
		return &trust.Trust{TrustedRoot: root}, nil
	case len(f.PublicKeys) == 0 && len(f.RootKeys) == 0 && f.SelfTrust:
		// the public keys of the signing keys signed the base, all of
		// them (threshold: their number)
		t := trust.SignedBy(signers...)
		t.Threshold = len(signers)
		return t, nil
	}
	return f.Trust()
}
