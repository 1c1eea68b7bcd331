package options

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/cli"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/keyless"
	"kbuild.dev/kbuild/sigbundle"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// SignerFlags are the private keys that sign: --sign-key and
// --sign-key-env.
type SignerFlags struct {
	Files []string
	Env   string
}

// AddFlags adds --sign-key and --sign-key-env; what says what they sign.
func (f *SignerFlags) AddFlags(fs *pflag.FlagSet, what string) {
	fs.StringArrayVar(&f.Files, "sign-key", nil, "private key `FILE` (PEM) that signs "+what+"; repeat for several keys")
	fs.StringVar(&f.Env, "sign-key-env", "", "name of an environment variable `VAR` holding a private key (PEM) that signs "+what+", for CI secrets")
}

// Signers loads the keys of --sign-key and --sign-key-env, in that order.
func (f *SignerFlags) Signers(env *cli.Env) ([]trust.Signer, error) {
	out, err := trust.LoadSigners(f.Files, env.Warnf)
	if err != nil {
		return nil, err
	}
	if f.Env != "" {
		k, err := trust.PrivateKeyFromEnv(env.Getenv, f.Env)
		if err != nil {
			return nil, fmt.Errorf("--sign-key-env %s: %w", f.Env, err)
		}
		out = append(out, k)
	}
	return out, nil
}

// KeylessFlags are --keyless, --fulcio-url, --rekor-url and
// --trusted-root: the charts' keyless cosign signatures (package
// keyless).
type KeylessFlags struct {
	On                         bool
	Fulcio, Rekor, TrustedRoot string
}

// AddFlags adds --keyless, --fulcio-url, --rekor-url and --trusted-root.
func (f *KeylessFlags) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&f.On, "keyless", false, "also sign each chart for cosign keylessly: a Fulcio certificate for the CI job's OIDC identity ($"+keyless.TokenEnv+", or GitHub Actions with permissions id-token: write) and a Rekor entry")
	fs.StringVar(&f.Fulcio, "fulcio-url", keyless.DefaultFulcioURL, "Fulcio `URL` that certifies --keyless signatures")
	fs.StringVar(&f.Rekor, "rekor-url", keyless.DefaultRekorURL, "Rekor `URL` that logs --keyless signatures")
	fs.StringVar(&f.TrustedRoot, "trusted-root", "", "Sigstore trusted_root.json `FILE` each --keyless signature is verified against before it is pushed (a private Sigstore's; default: none, the instances are trusted as they answer)")
}

// Signer is the keyless signer of --keyless; nil without it.
func (f *KeylessFlags) Signer(ctx context.Context, env *cli.Env) (sigbundle.KeylessSigner, error) {
	if !f.On {
		if f.TrustedRoot != "" {
			return nil, cli.Usagef("--trusted-root %s: it verifies --keyless signatures, and there is no --keyless; add --keyless or drop --trusted-root", f.TrustedRoot)
		}
		return nil, nil
	}
	s, err := keyless.FromEnv(ctx, env.Getenv, keyless.WithFulcio(f.Fulcio), keyless.WithRekor(f.Rekor), keyless.WithTrustedRootFile(f.TrustedRoot))
	if err != nil {
		return nil, fmt.Errorf("--keyless: %w", err)
	}
	fmt.Fprintf(env.Stderr, "signing charts keylessly for %s (issuer %s)\n", s.Identity().Subject, s.Identity().Issuer)
	return s, nil
}

// signKeyEnv and allowNewEnv are read by every command that signs an
// index (publish, repo index) when no flag says otherwise, so a build
// script that passes the same flags to every command (kubepkg-recipes'
// scripts/build-all.sh) gets its key from the environment: the signing key
// (a PEM private key, from a CI secret), and whether a missing base starts
// a new index (--allow-new; for a repository's first publish).
const (
	signKeyEnv  = "KBUILD_SIGN_KEY"
	allowNewEnv = "KBUILD_ALLOW_NEW"
)

// IndexSigners are the keys that sign an index: those of --sign-key and
// --sign-key-env, or when neither is given the key in $KBUILD_SIGN_KEY.
func (f *SignerFlags) IndexSigners(env *cli.Env) ([]trust.Signer, error) {
	if f.Given() || env.Getenv(signKeyEnv) == "" {
		return f.Signers(env)
	}
	k, err := trust.PrivateKeyFromEnv(env.Getenv, signKeyEnv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", signKeyEnv, err)
	}
	fmt.Fprintf(env.Stderr, "signing with the key in %s (%s)\n", signKeyEnv, k.KeyID())
	return []trust.Signer{k}, nil
}

// Given says whether any signing key was named.
func (f *SignerFlags) Given() bool { return len(f.Files) > 0 || f.Env != "" }

// TrustFlags are the public keys a signed index is verified with, as a
// subscriber pins them: --public-key (with --threshold) or --root-key
// (with --root-threshold).
type TrustFlags struct {
	PublicKeys    []string
	Threshold     int
	RootKeys      []string
	RootThreshold int
}

// AddFlags adds --public-key, --threshold, --root-key and
// --root-threshold.
func (f *TrustFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.PublicKeys, "public-key", nil, "public key `FILE` (PEM) trusted to sign the index; repeat for several")
	fs.IntVar(&f.Threshold, "threshold", 1, "how many distinct --public-key keys must have signed")
	fs.StringArrayVar(&f.RootKeys, "root-key", nil, "pinned root public key `FILE`, to verify the index under its root of trust; repeat for several")
	fs.IntVar(&f.RootThreshold, "root-threshold", 1, "root signatures needed: how many --root-key keys must have signed root version 1")
}

// Trust returns what verifies an index, nil when no key is given; giving
// both kinds of key is a usage error.
func (f *TrustFlags) Trust() (*trust.Trust, error) {
	if len(f.PublicKeys) == 0 && len(f.RootKeys) == 0 {
		return nil, nil
	}
	if len(f.PublicKeys) > 0 && len(f.RootKeys) > 0 {
		return nil, cli.Usagef("give --public-key or --root-key, not both")
	}
	return trust.LoadTrust(f.PublicKeys, f.Threshold, f.RootKeys, f.RootThreshold)
}

// Require is trust for a command that cannot run without keys.
func (f *TrustFlags) Require(cmd string) (*trust.Trust, error) {
	if (len(f.PublicKeys) > 0) == (len(f.RootKeys) > 0) {
		return nil, cli.Usagef("%s needs --public-key or --root-key (one of them)", cmd)
	}
	return trust.LoadTrust(f.PublicKeys, f.Threshold, f.RootKeys, f.RootThreshold)
}

// IndexFlags name a published index to read, --index REF (a site
// directory, an index.yaml or an http(s) URL of either), and the keys that
// verify it.
type IndexFlags struct {
	Ref string
	TrustFlags
}

// AddFlags adds --index, saying what the command does with it, and the
// Trust flags.
func (f *IndexFlags) AddFlags(fs *pflag.FlagSet, what string) {
	fs.StringVar(&f.Ref, "index", "", "the published index `REF` (site directory, index.yaml or http(s) URL) "+what)
	f.TrustFlags.AddFlags(fs)
}

// Published reads the index --index names and verifies it with the trust
// flags; nil without --index. Without keys it is a usage error (a
// Published index is use only once its signature is verified); when
// nothing is published there, notFound is the hint added.
func (f *IndexFlags) Published(ctx context.Context, timeout time.Duration, use, notFound string) (*index.RepositoryIndex, error) {
	if f.Ref == "" {
		return nil, nil
	}
	tr, err := f.Trust()
	if err != nil {
		return nil, err
	}
	if tr == nil {
		return nil, cli.Usagef("--index REF needs --public-key FILE or --root-key FILE: a published index is %s only once its signature is verified", use)
	}
	pub, err := siteread.ReadIndex(ctx, f.Ref, tr, siteread.WithTimeout(timeout))
	if errors.Is(err, siteread.ErrNotFound) {
		return nil, fmt.Errorf("%w; %s", err, notFound)
	}
	if err != nil {
		return nil, err
	}
	return pub.Verified.Index, nil
}

// IndexRootFlag is --index-root: your root.yaml, to verify --index under
// it instead of with pinned keys.
type IndexRootFlag struct {
	IndexRoot string
}

// AddFlags adds --index-root.
func (f *IndexRootFlag) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.IndexRoot, "index-root", "", "your root.yaml `FILE`: verify --index under it (and the newer roots published beside it) instead of with --public-key or --root-key")
}

// throwawayKey is where publish keeps the key it generates when given none,
// inside the build output directory.
const throwawayKey = "throwaway-index.key"

// IndexSignersOrThrowaway is indexSigners, or without any key the
// throwaway key kept in dir (generated the first time), with a warning
// that subscribers must not trust it beyond this machine.
func (f *SignerFlags) IndexSignersOrThrowaway(env *cli.Env, dir string) ([]trust.Signer, error) {
	signers, err := f.IndexSigners(env)
	if err != nil || len(signers) > 0 {
		return signers, err
	}
	k, created, err := trust.LoadOrCreateKey(filepath.Join(dir, throwawayKey))
	if err != nil {
		return nil, err
	}
	verb := "reusing"
	if created {
		verb = "generated"
	}
	fmt.Fprintf(env.Stderr, "warning: no --sign-key or --sign-key-env: %s the THROWAWAY key %s in %s; subscribers must not trust it beyond this machine\n", verb, k.KeyID(), filepath.Join(dir, throwawayKey))
	return []trust.Signer{k}, nil
}
