package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/sources"
)

func newRepoIndexCmd() *Command {
	var (
		a        = &publish.RepoIndex{}
		flags    *pflag.FlagSet
		keys     options.SignerFlags
		merge    options.MergeFlags
		noExpiry bool
		relocate []string
	)
	return &Command{
		Use:     "index DIST [-o SITE/index.yaml|-] [--sign-key FILE]... [--index REF (--public-key FILE | --root-key FILE | --index-root FILE)] [--allow-new] [--expires 720h | --no-expiry] [--verify]",
		Summary: "Write and sign index.yaml from the build records in DIST.",
		Help: `Reads every build record (kind: PackageSource) under DIST — other YAML such as
the BuildInfo sidecars, and DIST/oci, are skipped — and writes index.yaml:
each version with its spec digest, newest first, keys sorted as
sigs.k8s.io/yaml writes them, generated at SOURCE_DATE_EPOCH (or now). A
record's signature sidecar (X.sig.yaml, from 'kbuild trust sign') goes into
the version's signatures. Then it signs the exact bytes with every
--sign-key and --sign-key-env key: index.yaml.sig is written first, then
index.yaml, each through a temporary file and a rename.

With --index, the index published so far is fetched (a site directory, a
path or an http(s) URL), its signature checked against --public-key, your
pinned --root-key keys or your root.yaml (--index-root; newer roots are
fetched from beside the base) and every digest recomputed, before anything is re-signed: a base that fails
is never merged. Every published version is kept; a version and build built
again must have the same digest, otherwise the publish fails — published
versions do not change, give the recipe a new build number. A base that
does not exist (404) starts a new index only with --allow-new.

Every index expires (--expires, default 30 days after generated) unless
--no-expiry; publish again before then (a scheduled CI job that merges is
enough). Which subscribers enforce it: kubepkg clusters subscribed with a
root of trust (trust.rootKeys) and 'kbuild repo verify' refuse an expired
index; kubepkg clusters subscribed with plain publicKeys never check
expires, so for them only a key rotation retires an old signed index.

As kubepkg does, a PackageSource whose chart has no digest (one written by
hand) gets it pinned by downloading the chart; the file is left as it is
and the index pins what was downloaded. The flags of 'kubepkg repo index'
work with its meaning: -o - writes the index to stdout (unsigned only);
--verify pulls every chart the records in DIST pin and checks its archive
digest (--plain-http for loopback registries); --relocate
oci://OLD=oci://NEW moves the --index base's charts to a new registry path
(each must already be there with its published digest; the moved versions
get new spec digests; a version with delegated signatures cannot move);
without --sign-key or --sign-key-env the index is written unsigned, with a
warning (kubepkg subscribers then need allowUnsigned). kbuild is stricter
in one place: --index (kubepkg's and Helm's --merge, which still works for
one release, as do --merge-public-key and --merge-root) also needs the
base's --public-key, --root-key or --index-root, because an unverified
base is never re-signed.

Environment, for scripts that pass the same flags to every command
(kubepkg-recipes' build-all.sh): without --sign-key or --sign-key-env,
KBUILD_SIGN_KEY (a PEM private key) signs the index, and with --index and
no key for it, that key's public key verifies the base (the key signed
it too); KBUILD_ALLOW_NEW=1 is --allow-new. The mistake
to avoid: merging without the base's key, or signing with a key that the
root's index role does not list.

Examples:
  # first publication
  kbuild repo index dist/ -o _site/index.yaml --sign-key keys/index.key

  # in CI: merge with what is published, key from a secret
  kbuild repo index dist/ -o _site/index.yaml --sign-key-env KBUILD_SIGN_KEY \
    --index https://example.github.io/packages/index.yaml --public-key keys/index.pub

  # as kubepkg-recipes' build script runs it: the key in $KBUILD_SIGN_KEY
  # signs, and verifies the base it signed before
  KBUILD_SIGN_KEY="$(cat keys/index.key)" kbuild repo index dist -o _site/index.yaml \
    --merge https://example.github.io/packages/index.yaml

  # under a root of trust, starting the repository if nothing is published yet
  kbuild repo index dist/ -o _site/index.yaml --sign-key keys/index.key \
    --index https://example.github.io/packages/ --index-root _site/root.yaml --allow-new`,
		Flags: func(fs *pflag.FlagSet) {
			flags = fs
			options.AddOutputFlag(fs, &a.Out, "_site/index.yaml", "the index to `FILE` (- for stdout, unsigned only); the signature goes to FILE.sig")
			keys.AddFlags(fs, "index.yaml")
			merge.AddFlags(fs)
			fs.DurationVar(&a.Expires, "expires", 30*24*time.Hour, "how long after generated the index expires")
			fs.BoolVar(&noExpiry, "no-expiry", false, "write an index that never expires, without expires (not accepted under a root of trust)")
			options.AddTimeoutFlag(fs, &a.Timeout, "the --index site or a registry")
			fs.BoolVar(&a.VerifyCharts, "verify", false, "also pull every chart the build records in DIST pin and check its archive digest")
			options.AddPlainHTTPFlag(fs, &a.PlainHTTP, "for --verify and --relocate")
			fs.StringArrayVar(&relocate, "relocate", nil, "oci://OLD=oci://NEW: move the --index base's charts to a new registry path; each must be there with its published digest (repeatable)")
		},
		Args: exactArgs(1, "index takes one DIST directory"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			switch {
			case noExpiry && flags.Changed("expires") && a.Expires != 0:
				return usagef("--no-expiry and --expires %s contradict each other", a.Expires)
			case !noExpiry && a.Expires <= 0:
				return usagef("--expires %s: a signed index must expire; to publish one that never does, pass --no-expiry", a.Expires)
			case merge.Ref == "" && (merge.AllowNew || len(relocate) > 0):
				return usagef("--allow-new and --relocate are about the --index base: they need --index")
			}
			if noExpiry {
				a.Expires = 0
			}
			err := merge.CheckSigning(env, &keys)
			if err != nil {
				return err
			}
			if a.Relocate, err = publish.ParseRelocate(relocate); err != nil {
				return usagef("--relocate %v", err)
			}
			if a.Signers, err = keys.IndexSigners(env); err != nil {
				return err
			}
			if a.Out == "-" && len(a.Signers) > 0 {
				return usagef("-o -: a signed index needs a file to write index.yaml.sig beside; give -o FILE")
			}
			if a.Generated, err = epochOrNow(env); err != nil {
				return err
			}
			tuneGC(env)
			if a.Fetcher, err = sources.New(sources.WithPlainHTTP(a.PlainHTTP), sources.WithLogger(options.Progress(env))); err != nil {
				return err
			}
			if a.MergeTrust, err = merge.MergeTrust(a.Signers); err != nil {
				return err
			}
			a.Dist = args[0]
			a.Merge = merge.Ref
			a.AllowNew = merge.AllowNew
			a.Warnf = env.Warnf
			a.Stdout, a.Stderr = env.Stdout, env.Stderr
			res, err := a.Run(ctx)
			var past *publish.PastExpiryError
			switch {
			case res != nil && len(res.Refused) > 0:
				for _, m := range res.Refused {
					fmt.Fprintf(env.Stderr, "refused: %v\n", m)
				}
				return fmt.Errorf("--verify: %w", err)
			case errors.As(err, &past):
				return fmt.Errorf("the index would expire at %s, which is past (generated %s + --expires %s); set SOURCE_DATE_EPOCH to a recent time or raise --expires",
					past.Expires.Format(time.RFC3339), past.Generated.Format(time.RFC3339), past.After)
			case err != nil:
				return withInputFlag(err)
			case res.Index.Unsigned && a.Out == "-":
				return nil
			case res.Index.Unsigned:
				env.Warnf("warning: %s is not signed: kubepkg subscribers accept it only with allowUnsigned: true, and anyone who can change the file changes what they install; sign it with --sign-key FILE or --sign-key-env VAR", res.Index.Index)
			}
			return res.Index.WriteText(env.Stdout, a.Signers)
		},
	}
}
