package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/chartpin"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/distindex"
	"kbuild.dev/kbuild/internal/fetchsite"
	"kbuild.dev/kbuild/internal/netdeadline"
)

// exitFetch is the exit status of repo verify when the site cannot be read
// (as opposed to 1, what it serves was read and refused: bad signatures,
// content, or a file over its size limit).
const exitFetch = 3

func newRepoCmd() *Command {
	return &Command{
		Name:    "repo",
		Usage:   "kbuild repo COMMAND",
		Summary: "Make signing keys, publish a signed index.yaml, verify a published one.",
		Help: `A repository is a static site: index.yaml (every published version of every
package, with its spec digest), index.yaml.sig (ed25519 signatures of its
exact bytes) and, with a root of trust, root.yaml and root/<N>.yaml (see
'kbuild trust'). kubepkg clusters subscribe to the URL of index.yaml.`,
		Subcommands: []*Command{newRepoKeygenCmd(), newRepoIndexCmd(), newRepoVerifyCmd()},
	}
}

func newRepoKeygenCmd() *Command {
	return &Command{
		Name:    "keygen",
		Usage:   "kbuild repo keygen PREFIX",
		Summary: "Create an ed25519 signing key: PREFIX.key (private, mode 0600) and PREFIX.pub.",
		Help: `Writes PREFIX.key (PEM "PRIVATE KEY", PKCS #8, mode 0600) and PREFIX.pub
(PEM "PUBLIC KEY", PKIX) and prints the keyid: the hex sha256 of the public
key. An existing file is never overwritten. Keep PREFIX.key out of the
repository: in CI pass it through a secret with --sign-key-env; give
subscribers PREFIX.pub.

Examples:
  # make the key that signs index.yaml
  kbuild repo keygen keys/index

  # store it as a CI secret and print the public key to publish
  gh secret set KBUILD_SIGN_KEY < keys/index.key && cat keys/index.pub`,
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) != 1 {
				return usagef("keygen takes one PREFIX")
			}
			k, err := index.GenerateKey(rand.Reader)
			if err != nil {
				return err
			}
			priv, err := k.MarshalPEM()
			if err != nil {
				return err
			}
			if err := writeKeyPair(args[0], priv, k.Public().PEM()); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "%s\n", k.KeyID())
			fmt.Fprintf(env.Stderr, "wrote %s.key (keep it secret) and %s.pub\n", args[0], args[0])
			return nil
		},
	}
}

// writeKeyPair writes PREFIX.key (0600) and PREFIX.pub, refusing to
// overwrite either.
func writeKeyPair(prefix string, priv, pub []byte) error {
	for _, p := range []string{prefix + ".key", prefix + ".pub"} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s exists; refusing to overwrite a key (remove it first if you mean to replace it)", p)
		}
	}
	if err := os.MkdirAll(filepath.Dir(prefix), 0o755); err != nil {
		return err
	}
	if err := writeNew(prefix+".key", priv, 0o600); err != nil {
		return err
	}
	if err := writeNew(prefix+".pub", pub, 0o644); err != nil {
		os.Remove(prefix + ".key")
		return err
	}
	return nil
}

// writeNew writes data to a temporary file beside path and links it to
// path, which fails if path exists: a new file, written whole or not at
// all.
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s exists; refusing to overwrite it", path)
		}
		return err
	}
	return nil
}

// signerFlags choose the keys that sign.
type signerFlags struct {
	files []string
	env   string
}

func (f *signerFlags) addFlags(fs *pflag.FlagSet, what string) {
	fs.StringArrayVar(&f.files, "sign-key", nil, "private key file (PEM) that signs "+what+"; repeat for several keys")
	fs.StringVar(&f.env, "sign-key-env", "", "name of an environment variable holding a private key (PEM), for CI secrets")
}

func (f *signerFlags) signers(env *Env) ([]index.Signer, error) {
	var out []index.Signer
	for _, p := range f.files {
		k, err := loadPrivateKey(env, p)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	if f.env != "" {
		v := env.Getenv(f.env)
		if strings.TrimSpace(v) == "" {
			return nil, fmt.Errorf("--sign-key-env %s: the variable is unset or empty", f.env)
		}
		k, err := index.ParsePrivateKey([]byte(v))
		if err != nil {
			return nil, fmt.Errorf("--sign-key-env %s: %w", f.env, err)
		}
		out = append(out, k)
	}
	return out, nil
}

// loadPrivateKey reads a private key file, warning when others may read it.
// Errors name the file, never its content.
func loadPrivateKey(env *Env, path string) (*index.PrivateKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(env.Stderr, "warning: key %s is readable by others (mode %04o); run chmod 600 %s\n", path, fi.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	k, err := index.ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	return k, nil
}

// loadPublicKey reads a public key file; with private true a private key
// file is accepted too, for its public half.
func loadPublicKey(path string, private bool) (*index.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	if private && strings.Contains(string(b), "PRIVATE KEY") {
		k, err := index.ParsePrivateKey(b)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", path, err)
		}
		return k.Public(), nil
	}
	k, err := index.ParsePublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	return k, nil
}

func loadPublicKeys(paths []string, private bool) ([]*index.PublicKey, error) {
	var out []*index.PublicKey
	for _, p := range paths {
		k, err := loadPublicKey(p, private)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// epochOrNow returns SOURCE_DATE_EPOCH if set, else the current time, in
// UTC whole seconds.
func epochOrNow(env *Env) (time.Time, error) {
	if env.Getenv("SOURCE_DATE_EPOCH") != "" {
		return builder.SourceDateEpoch(env.Getenv)
	}
	return time.Now().UTC().Truncate(time.Second), nil
}

// repoIndexFlags are the flags of repo index.
type repoIndexFlags struct {
	fs  *pflag.FlagSet
	out string
	mergeFlags
	sign       signerFlags
	expires    time.Duration
	noExpiry   bool
	mergeTimeo time.Duration
}

func newRepoIndexCmd() *Command {
	f := &repoIndexFlags{}
	return &Command{
		Name:    "index",
		Usage:   "kbuild repo index DIST -o SITE/index.yaml --sign-key FILE [--merge FILE|URL (--merge-public-key FILE | --merge-root FILE)] [--allow-new] [--expires 720h | --no-expiry]",
		Summary: "Write and sign index.yaml from the build records in DIST.",
		Help: `Reads every build record (kind: PackageSource) under DIST — other YAML such as
the BuildInfo sidecars, and DIST/oci, are skipped — and writes index.yaml:
each version with its spec digest, newest first, keys sorted as
sigs.k8s.io/yaml writes them, generated at SOURCE_DATE_EPOCH (or now). A
record's signature sidecar (X.sig.yaml, from 'kbuild trust sign') goes into
the version's signatures. Then it signs the exact bytes with every
--sign-key and --sign-key-env key: index.yaml.sig is written first, then
index.yaml, each through a temporary file and a rename.

With --merge, the index published so far is fetched (a path or an http(s)
URL), its signature checked against --merge-public-key or the root of trust
(--merge-root, your root.yaml; newer roots are fetched from beside the base)
and every digest recomputed, before anything is re-signed: a base that fails
is never merged. Every published version is kept; a version and build built
again must have the same digest, otherwise the publish fails — published
versions do not change, give the recipe a new build number. A base that
does not exist (404) starts a new index only with --allow-new.

Every signed index expires (--expires, default 30 days after generated)
unless --no-expiry; subscribers refuse an expired index, so publish again
before then (a scheduled CI job that merges is enough). The mistake to
avoid: merging without the base's key, or signing with a key that the
root's index role does not list.

Examples:
  # first publication
  kbuild repo index dist/ -o _site/index.yaml --sign-key keys/index.key

  # in CI: merge with what is published, key from a secret
  kbuild repo index dist/ -o _site/index.yaml --sign-key-env KBUILD_SIGN_KEY \
    --merge https://example.github.io/packages/index.yaml --merge-public-key keys/index.pub

  # under a root of trust, starting the repository if nothing is published yet
  kbuild repo index dist/ -o _site/index.yaml --sign-key keys/index.key \
    --merge https://example.github.io/packages/ --merge-root _site/root.yaml --allow-new`,
		Flags: func(fs *pflag.FlagSet) {
			f.fs = fs
			fs.StringVarP(&f.out, "output", "o", "_site/index.yaml", "index file to write; the signature goes to the same path + .sig")
			f.sign.addFlags(fs, "index.yaml")
			f.mergeFlags.addFlags(fs)
			fs.DurationVar(&f.expires, "expires", 30*24*time.Hour, "how long after generated the index expires")
			fs.BoolVar(&f.noExpiry, "no-expiry", false, "write an index without expires (not accepted under a root of trust)")
			fs.DurationVar(&f.mergeTimeo, "timeout", netdeadline.DefaultIdle, "give up on the --merge site when it sends nothing for this long")
		},
		Run: f.run,
	}
}

func (f *repoIndexFlags) run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 {
		return usagef("index takes one DIST directory")
	}
	switch {
	case f.noExpiry && f.fs.Changed("expires") && f.expires != 0:
		return usagef("--no-expiry and --expires %s contradict each other", f.expires)
	case !f.noExpiry && f.expires <= 0:
		return usagef("--expires %s: a signed index must expire; to publish one that never does, pass --no-expiry", f.expires)
	case f.merge == "" && (len(f.mergeKeys) > 0 || f.mergeRoot != "" || f.allowNew):
		return usagef("--merge-public-key, --merge-root and --allow-new need --merge")
	case f.merge != "" && (len(f.mergeKeys) > 0) == (f.mergeRoot != ""):
		return usagef("--merge needs the base's --merge-public-key or --merge-root (one of them): an unverified base is never re-signed")
	case len(f.sign.files) == 0 && f.sign.env == "":
		return usagef("index needs a signing key: --sign-key FILE or --sign-key-env VAR")
	}
	signers, err := f.sign.signers(env)
	if err != nil {
		return err
	}
	generated, err := epochOrNow(env)
	if err != nil {
		return err
	}
	now := time.Now()
	var expires time.Time
	if !f.noExpiry {
		expires = generated.Add(f.expires)
		if !expires.After(now) {
			return fmt.Errorf("the index would expire at %s, which is past (generated %s + --expires %s); set SOURCE_DATE_EPOCH to a recent time or raise --expires",
				expires.Format(time.RFC3339), generated.Format(time.RFC3339), f.expires)
		}
	}
	tuneGC(env)
	// Versions are kept as their YAML: an index of 100,000 versions fits in
	// a few hundred MB. The base comes first, so that a version built again
	// with other content fails as soon as it is read.
	b := index.NewBuilder(index.Compact())
	if f.merge != "" {
		trust, err := f.mergeTrust(signers)
		if err != nil {
			return err
		}
		if err := f.addBase(ctx, env, b, trust, now); err != nil {
			return err
		}
	}
	if err := distindex.Add(ctx, b, args[0]); err != nil {
		return err
	}
	pkgs, versions := b.Counts()
	if err := writeSigned(f.out, b, generated, expires, signers); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "wrote %s: %d packages, %d versions\n", f.out, pkgs, versions)
	ids := make([]string, len(signers))
	for i, s := range signers {
		ids[i] = s.KeyID()
	}
	label := "keyid"
	if len(ids) > 1 {
		label = "keyids"
	}
	fmt.Fprintf(env.Stdout, "signed %s.sig (%s %s)\n", f.out, label, strings.Join(ids, ", "))
	return nil
}

// writeSigned writes the index of b to path and its signature to path.sig,
// each through a temporary file and a rename, the signature first. The
// index goes to its temporary file straight from b, whose memory is then
// released, and is read back (mapped) to be signed: the versions and the
// index are never in memory together.
func writeSigned(path string, b *index.Builder, generated, expires time.Time, signers []index.Signer) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	w := bufio.NewWriterSize(f, 1<<20)
	_, err = b.WriteTo(w, generated, expires)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	b.Reset() // nothing of it is needed any more
	debug.FreeOSMemory()
	data, err := fetchsite.ReadFile(tmp, index.MaxIndexSize)
	if err != nil {
		return err
	}
	sigData, err := signatureFile(data, signers)
	if err != nil {
		return err
	}
	if err := dist.WriteFile(path+".sig", sigData, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// mergeFlags name the published index a new one is merged over, and what
// verifies it.
type mergeFlags struct {
	merge     string
	mergeKeys []string
	mergeRoot string
	allowNew  bool
}

func (f *mergeFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.merge, "merge", "", "published index.yaml to keep every version of (path or http(s) URL)")
	fs.StringArrayVar(&f.mergeKeys, "merge-public-key", nil, "public key that signed the --merge index; repeat for several")
	fs.StringVar(&f.mergeRoot, "merge-root", "", "your root.yaml: verify the --merge index under it (and newer published roots)")
	fs.BoolVar(&f.allowNew, "allow-new", false, "with --merge, start a new index when the base does not exist")
}

// mergeTrust returns what the base index is verified with, and checks
// that the signing keys satisfy the root's index role.
func (f *mergeFlags) mergeTrust(signers []index.Signer) (*index.Trust, error) {
	if f.mergeRoot == "" {
		keys, err := loadPublicKeys(f.mergeKeys, false)
		if err != nil {
			return nil, err
		}
		return &index.Trust{IndexKeys: keys}, nil
	}
	b, err := os.ReadFile(f.mergeRoot)
	if err != nil {
		return nil, err
	}
	root, err := index.ParseRoot(b)
	if err != nil {
		return nil, fmt.Errorf("--merge-root %s: %w", f.mergeRoot, err)
	}
	if err := checkIndexRole(root, f.mergeRoot, signers); err != nil {
		return nil, err
	}
	return &index.Trust{TrustedRoot: root}, nil
}

// checkIndexRole refuses signers that do not meet the index role of root
// (read from file): subscribers would refuse what they sign.
func checkIndexRole(root *index.Root, file string, signers []index.Signer) error {
	role := root.Signed.Roles[index.RoleIndex]
	n := 0
	for _, s := range signers {
		for _, id := range role.KeyIDs {
			if s.KeyID() == id {
				n++
				break
			}
		}
	}
	if n < role.Threshold {
		return fmt.Errorf("the signing keys include %d of the index role's keys in %s (version %d), which needs %d: subscribers would refuse the index; sign with the index keys the root lists",
			n, file, root.Signed.Version, role.Threshold)
	}
	return nil
}

// addBase fetches the base index, verifies it and adds its versions to b;
// a missing base is an error unless --allow-new.
func (f *repoIndexFlags) addBase(ctx context.Context, env *Env, b *index.Builder, trust *index.Trust, now time.Time) error {
	site, err := fetchsite.New(f.merge, fetchsite.WithTimeout(f.mergeTimeo))
	if err != nil {
		return err
	}
	loc := site.Location(site.IndexName())
	data, sig, err := site.Index(ctx)
	switch {
	case errors.Is(err, fetchsite.ErrNotFound) && !f.allowNew:
		return fmt.Errorf("base index %s does not exist; pass --allow-new to start a new index (only for the first publication)", loc)
	case errors.Is(err, fetchsite.ErrNotFound):
		fmt.Fprintf(env.Stderr, "no base index at %s: starting a new index (--allow-new)\n", loc)
		return nil
	case err != nil:
		return fmt.Errorf("base index: %w", err)
	}
	defer fetchsite.Release(data) // the compact Builder keeps nothing of it
	if trust.TrustedRoot != nil {
		if err := site.Roots(ctx, trust, trust.TrustedRoot.Signed.Version); err != nil {
			return fmt.Errorf("base index: %w", err)
		}
	}
	v, err := b.AddVerified(data, sig, trust, index.VerifyOptions{Now: now, AllowExpired: true})
	var ve *index.VerificationError
	if errors.As(err, &ve) {
		return fmt.Errorf("base index %s failed verification, refusing to merge and re-sign it: %w", loc, err)
	}
	if err != nil {
		return err
	}
	for _, w := range v.Warnings {
		fmt.Fprintf(env.Stderr, "warning: base index: %s\n", w)
	}
	return nil
}

// repoVerifyFlags are the flags of repo verify.
type repoVerifyFlags struct {
	publicKeys    []string
	threshold     int
	rootKeys      []string
	rootThreshold int
	state         string
	charts        bool
	plainHTTP     bool
	timeout       time.Duration
}

func newRepoVerifyCmd() *Command {
	f := &repoVerifyFlags{}
	return &Command{
		Name:    "verify",
		Usage:   "kbuild repo verify URL|DIR/index.yaml (--public-key FILE... [--threshold N] | --root-key FILE... [--root-threshold N]) [--state FILE] [--charts]",
		Summary: "Verify a published index as a subscriber does.",
		Help: `Fetches index.yaml and index.yaml.sig (and, with --root-key, root.yaml and
root/1.yaml … root/N.yaml) from a directory or an http(s) URL and checks, in
a subscriber's order: each root version signed by the previous one's root
keys and its own, from the pinned keys on; the newest root not expired;
index.yaml signed by a threshold of trusted keys (the root's index role);
its expiry; every spec against its digest; delegated package versions
signed by their delegation (those without enough signatures are dropped,
with a warning). With --state FILE it refuses an index or root older than
the one recorded, or a root that differs from the recorded version (a
fork), then records the new one. With --charts it pulls every pinned chart
and compares its archive digest with the pin.

Exit status: 0 verified, 1 refused (the message says why; a file over its
documented size limit is refused too), 3 the site could not be read (no
connection, a missing index, a server that stalls). The mistake to avoid: trusting keys fetched from the site
itself — pass keys you got out of band.

Examples:
  # verify a site with its index key
  kbuild repo verify https://example.github.io/packages/index.yaml --public-key keys/index.pub

  # under a root of trust, remembering what was accepted
  kbuild repo verify https://example.github.io/packages/ --root-key keys/root1.pub --root-key keys/root2.pub --root-threshold 2 --state .kbuild-state.json

  # a local site, and every chart it pins (loopback registry)
  kbuild repo verify _site/index.yaml --public-key keys/index.pub --charts --plain-http`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringArrayVar(&f.publicKeys, "public-key", nil, "public key trusted to sign index.yaml; repeat for several")
			fs.IntVar(&f.threshold, "threshold", 1, "how many distinct --public-key keys must have signed")
			fs.StringArrayVar(&f.rootKeys, "root-key", nil, "pinned root public key; repeat for several")
			fs.IntVar(&f.rootThreshold, "root-threshold", 1, "how many --root-key keys must have signed root version 1")
			fs.StringVar(&f.state, "state", "", "file recording the last accepted index and root; refuses rollbacks and forks, then is updated")
			fs.BoolVar(&f.charts, "charts", false, "also pull every chart and check its archive digest against the pin")
			fs.BoolVar(&f.plainHTTP, "plain-http", false, "with --charts, talk plain HTTP to registries (loopback registries)")
			fs.DurationVar(&f.timeout, "timeout", netdeadline.DefaultIdle, "give up on the site or a registry when it sends nothing for this long")
		},
		Run: f.run,
	}
}

func (f *repoVerifyFlags) run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 {
		return usagef("verify takes one URL or path of index.yaml")
	}
	if (len(f.publicKeys) > 0) == (len(f.rootKeys) > 0) {
		return usagef("verify needs --public-key or --root-key (one of them)")
	}
	trust := &index.Trust{Threshold: f.threshold, RootThreshold: f.rootThreshold}
	var err error
	if trust.IndexKeys, err = loadPublicKeys(f.publicKeys, false); err != nil {
		return err
	}
	if trust.RootKeys, err = loadPublicKeys(f.rootKeys, false); err != nil {
		return err
	}
	var state *index.State
	if f.state != "" {
		b, err := os.ReadFile(f.state)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return err
		default:
			if state, err = index.ParseState(b); err != nil {
				return fmt.Errorf("%s: %w", f.state, err)
			}
		}
	}
	site, err := fetchsite.New(args[0], fetchsite.WithTimeout(f.timeout))
	if err != nil {
		return err
	}
	tuneGC(env)
	// Without --charts nothing needs the parsed index: check each package
	// as it is read and drop it.
	v, err := site.Verify(ctx, trust, index.VerifyOptions{Now: time.Now(), State: state, DiscardIndex: !f.charts})
	var ve *index.VerificationError
	switch {
	case errors.As(err, &ve):
		fmt.Fprintf(env.Stderr, "refused: %v\n", err)
		return &exitError{code: 1}
	case err != nil:
		fmt.Fprintf(env.Stderr, "error: %v\n", err)
		return &exitError{code: exitFetch}
	}
	for _, w := range v.Warnings {
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	if f.charts {
		n, bad := chartpin.Check(ctx, v.Index, chartpin.Options{PlainHTTP: f.plainHTTP, Timeout: f.timeout})
		if len(bad) > 0 {
			for _, m := range bad {
				fmt.Fprintf(env.Stderr, "refused: %v\n", m)
			}
			fmt.Fprintf(env.Stderr, "%d of %d charts do not match their pins\n", len(bad), n)
			return &exitError{code: 1}
		}
		fmt.Fprintf(env.Stderr, "%d charts match their pinned digests\n", n)
	}
	if f.state != "" {
		b, err := v.State.Marshal()
		if err != nil {
			return err
		}
		if err := dist.WriteFile(f.state, b, 0o644); err != nil {
			return err
		}
	}
	now := time.Now()
	fmt.Fprintf(env.Stdout, "%s: %d packages, %d versions, signed by %d of %d, %s\n",
		site.IndexName(), v.Packages, v.Versions, len(v.SignedBy), v.Keys, expiresIn(v.Expires, now))
	if v.Root != nil {
		fmt.Fprintf(env.Stdout, "root.yaml: version %d, %s\n", v.Root.Signed.Version, expiresIn(v.Root.Signed.Expires, now))
	}
	return nil
}

// tuneGC trades memory for garbage-collection work in the commands that
// read or write an index of 100,000 versions: collect less often, but stay
// under a soft limit of 896 MiB. GOGC and GOMEMLIMIT override it.
func tuneGC(env *Env) {
	if env.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if env.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(896 << 20)
	}
}

// expiresIn says when t is, from now: "expires in 29 days".
func expiresIn(t, now time.Time) string {
	if t.IsZero() {
		return "no expiry"
	}
	d := t.Sub(now)
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("expires in %d days", int(d/(24*time.Hour)))
	case d >= 2*time.Hour:
		return fmt.Sprintf("expires in %d hours", int(d/time.Hour))
	default:
		return fmt.Sprintf("expires in %d minutes", int(d/time.Minute))
	}
}

// signatureFile signs data with every signer and returns the content of
// its .sig file.
func signatureFile(data []byte, signers []index.Signer) ([]byte, error) {
	sigs, err := index.Sign(data, signers...)
	if err != nil {
		return nil, err
	}
	return index.MarshalSignatures(sigs)
}
