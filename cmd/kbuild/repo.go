package main

import (
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
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/sources"
	"kbuild.dev/kbuild/suite"
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
		Subcommands: []*Command{newRepoKeygenCmd(), newRepoIndexCmd(), newRepoVerifyCmd(), newRepoWithdrawCmd()},
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

// loadTrust reads the index keys and root keys that verify a published
// index, with their thresholds (0 for the default of 1), into a Trust.
func loadTrust(indexKeys []string, threshold int, rootKeys []string, rootThreshold int) (*index.Trust, error) {
	t := &index.Trust{Threshold: threshold, RootThreshold: rootThreshold}
	var err error
	if t.IndexKeys, err = loadPublicKeys(indexKeys, false); err != nil {
		return nil, err
	}
	if t.RootKeys, err = loadPublicKeys(rootKeys, false); err != nil {
		return nil, err
	}
	return t, nil
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
	timeoutFlag
	plainHTTPFlag
	sign         signerFlags
	expires      time.Duration
	noExpiry     bool
	verifyCharts bool
	relocate     []string
}

func newRepoIndexCmd() *Command {
	f := &repoIndexFlags{}
	return &Command{
		Name:    "index",
		Usage:   "kbuild repo index DIST [-o SITE/index.yaml|-] [--sign-key FILE]... [--index REF (--public-key FILE | --root-key FILE | --index-root FILE)] [--allow-new] [--expires 720h | --no-expiry] [--verify]",
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
base is never re-signed. The mistake
to avoid: merging without the base's key, or signing with a key that the
root's index role does not list.

Examples:
  # first publication
  kbuild repo index dist/ -o _site/index.yaml --sign-key keys/index.key

  # in CI: merge with what is published, key from a secret
  kbuild repo index dist/ -o _site/index.yaml --sign-key-env KBUILD_SIGN_KEY \
    --index https://example.github.io/packages/index.yaml --public-key keys/index.pub

  # as kubepkg-recipes' build script runs it: unsigned, charts checked
  kbuild repo index dist -o site/index.yaml --plain-http --verify

  # under a root of trust, starting the repository if nothing is published yet
  kbuild repo index dist/ -o _site/index.yaml --sign-key keys/index.key \
    --index https://example.github.io/packages/ --index-root _site/root.yaml --allow-new`,
		Flags: func(fs *pflag.FlagSet) {
			f.fs = fs
			addOutputFlag(fs, &f.out, "_site/index.yaml", "the index to `FILE` (- for stdout, unsigned only); the signature goes to FILE.sig")
			f.sign.addFlags(fs, "index.yaml")
			f.mergeFlags.addFlags(fs)
			fs.DurationVar(&f.expires, "expires", 30*24*time.Hour, "how long after generated the index expires")
			fs.BoolVar(&f.noExpiry, "no-expiry", false, "write an index that never expires, without expires (not accepted under a root of trust)")
			f.timeoutFlag.addFlags(fs, "the --index site or a registry")
			fs.BoolVar(&f.verifyCharts, "verify", false, "also pull every chart the build records in DIST pin and check its archive digest")
			f.plainHTTPFlag.addFlags(fs, "for --verify and --relocate")
			fs.StringArrayVar(&f.relocate, "relocate", nil, "oci://OLD=oci://NEW: move the --index base's charts to a new registry path; each must be there with its published digest (repeatable)")
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
	case f.ref == "" && (f.allowNew || len(f.relocate) > 0):
		return usagef("--allow-new and --relocate are about the --index base: they need --index")
	}
	if err := f.mergeFlags.check(); err != nil {
		return err
	}
	moves, err := parseRelocate(f.relocate)
	if err != nil {
		return err
	}
	signers, err := f.sign.signers(env)
	if err != nil {
		return err
	}
	if f.out == "-" && len(signers) > 0 {
		return usagef("-o -: a signed index needs a file to write index.yaml.sig beside; give -o FILE")
	}
	if f.verifyCharts {
		if err := verifyRecordCharts(ctx, env, args[0], f.plainHTTP); err != nil {
			return err
		}
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
	pin, err := chartPinner(env, f.plainHTTP)
	if err != nil {
		return err
	}
	opts := []publish.Option{publish.WithSigners(signers...), publish.WithGenerated(generated), publish.WithTimeout(f.timeout),
		publish.WithOutput(env.Stdout, env.Stderr),
		publish.WithRelocate(moves, f.plainHTTP), publish.WithChartPinner(pin)}
	if !f.noExpiry {
		opts = append(opts, publish.WithExpires(f.expires))
	} else {
		opts = append(opts, publish.WithExpires(0))
	}
	if f.ref != "" {
		trust, err := f.mergeTrust(signers)
		if err != nil {
			return err
		}
		opts = append(opts, publish.WithMerge(f.ref, trust, f.allowNew))
	}
	p, err := publish.New(opts...)
	if err != nil {
		return err
	}
	res, err := p.Index(ctx, args[0], f.out)
	if err != nil {
		return err
	}
	if res.Unsigned {
		if f.out != "-" {
			fmt.Fprintf(env.Stdout, "wrote %s: %d packages, %d versions\n", res.Index, res.Packages, res.Versions)
		}
		return nil
	}
	printSigned(env, res, signers)
	return nil
}

// chartPinner pins a chart a PackageSource names without a digest by
// downloading it, as kubepkg repo index does (trust on first use: the
// record file is not changed, the index carries the digest).
func chartPinner(env *Env, plainHTTP bool) (distindex.Pinner, error) {
	fetch, err := sources.New(sources.WithPlainHTTP(plainHTTP), sources.WithLogger(progress(env)))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, c *index.ChartRef) error {
		src, err := fetch.Pin(ctx, recipe.Source{Chart: &recipe.ChartSource{Repository: c.Repository, Name: c.Name, Version: c.Version}})
		if err != nil {
			return err
		}
		c.Digest = src.Chart.Digest
		fmt.Fprintf(env.Stderr, "pinned chart %s/%s %s at %s (it had no digest; the index now pins what was downloaded)\n", strings.TrimSuffix(c.Repository, "/"), c.Name, c.Version, c.Digest)
		return nil
	}, nil
}

// parseRelocate reads --relocate oci://OLD=oci://NEW values.
func parseRelocate(vals []string) (map[string]string, error) {
	moves := map[string]string{}
	for _, v := range vals {
		from, to, ok := strings.Cut(v, "=")
		from, to = strings.TrimSuffix(from, "/"), strings.TrimSuffix(to, "/")
		if !ok || !strings.HasPrefix(from, "oci://") || !strings.HasPrefix(to, "oci://") || len(from) <= len("oci://") || len(to) <= len("oci://") {
			return nil, usagef("--relocate %q: want oci://OLD=oci://NEW", v)
		}
		moves[from] = to
	}
	return moves, nil
}

// checkCharts pulls every chart x pins, checks its archive digest and
// prints each one refused; it returns how many were checked and refused.
func checkCharts(ctx context.Context, env *Env, x *index.RepositoryIndex, plainHTTP bool, timeout time.Duration) (checked, refused int) {
	n, bad := chartpin.Check(ctx, x, chartpin.Options{PlainHTTP: plainHTTP, Timeout: timeout})
	for _, m := range bad {
		fmt.Fprintf(env.Stderr, "refused: %v\n", m)
	}
	return n, len(bad)
}

// verifyRecordCharts pulls every chart the build records under dir pin
// and checks its archive digest (kubepkg repo index --verify).
func verifyRecordCharts(ctx context.Context, env *Env, dir string, plainHTTP bool) error {
	b := index.NewBuilder()
	if err := distindex.Add(ctx, b, dir); err != nil {
		return err
	}
	x, err := b.Index(time.Unix(1, 0))
	if err != nil {
		return err
	}
	n, bad := checkCharts(ctx, env, x, plainHTTP, 0)
	if bad > 0 {
		return fmt.Errorf("--verify: %d of %d charts do not match their pins; nothing was written", bad, n)
	}
	fmt.Fprintf(env.Stderr, "%d charts match their pinned digests\n", n)
	return nil
}

// mergeFlags name the published index a new one is merged over (--index,
// once --merge), and what verifies it: --public-key (once
// --merge-public-key), --root-key, or --index-root (once --merge-root).
type mergeFlags struct {
	indexFlags
	indexRootFlag
	allowNew bool
}

func (f *mergeFlags) addFlags(fs *pflag.FlagSet) {
	f.indexFlags.addFlags(fs, "to keep every version of")
	f.indexRootFlag.addFlags(fs)
	fs.BoolVar(&f.allowNew, "allow-new", false, "with --index, start a new index when the base does not exist")
	addAlias(fs, "merge", "", "index")
	addAlias(fs, "merge-public-key", "", "public-key")
	addAlias(fs, "merge-root", "", "index-root")
}

// check returns a usage error unless --index has exactly one way to be
// verified (or no --index and nothing that needs one).
func (f *mergeFlags) check() error {
	ways := 0
	for _, given := range []bool{len(f.publicKeys) > 0, len(f.rootKeys) > 0, f.indexRoot != ""} {
		if given {
			ways++
		}
	}
	switch {
	case f.ref == "" && ways > 0:
		return usagef("--public-key, --root-key and --index-root verify the --index base: they need --index")
	case f.ref != "" && ways > 1:
		return usagef("--index: give one of --public-key, --root-key or --index-root")
	case f.ref != "" && ways == 0:
		return usagef("--index %s: kbuild verifies the published index before it merges over it (kubepkg does not): add --public-key FILE (the public key that signed it), --root-key FILE (your pinned root keys) or --index-root FILE (your root.yaml)", f.ref)
	}
	return nil
}

// mergeTrust returns what the base index is verified with, and checks
// that the signing keys satisfy the root's index role.
func (f *mergeFlags) mergeTrust(signers []index.Signer) (*index.Trust, error) {
	if f.indexRoot == "" {
		return f.trust()
	}
	root, _, err := publish.LoadRoot(f.indexRoot, signers)
	if err != nil {
		return nil, fmt.Errorf("--index-root: %w", err)
	}
	return &index.Trust{TrustedRoot: root}, nil
}

// repoWithdrawFlags are the flags of repo withdraw.
type repoWithdrawFlags struct {
	site    string
	suites  string
	build   int
	reason  string
	keys    signerFlags
	expires time.Duration
	mergeFlags
	timeoutFlag
}

func newRepoWithdrawCmd() *Command {
	f := &repoWithdrawFlags{}
	return &Command{
		Name:    "withdraw",
		Usage:   "kbuild repo withdraw NAME@VERSION --build N --reason TEXT [--site DIR] --sign-key FILE",
		Summary: "Take one published version out of the signed index, for good.",
		Help: `withdraw removes NAME VERSION build N from the site's index.yaml and records a
tombstone in its place (under "withdrawn:", with the spec digest, the date
and TEXT), then re-signs the index with a fresh expiry and rewrites the
catalog, which lists the withdrawn version with its reason. The same
version and build can never be published again — publish skips the
recipe, and 'repo index' and merges refuse it — so a bad version is fixed
by raising spec.build in its recipe. Tombstones are kept by every later
publish and travel through --index. With a suites file (--suites), the
version is withdrawn from every suite of the site that holds it, and
'kbuild promote' carries the tombstone into the others.

The index is verified first, with the signing keys (or --public-key,
--root-key or --index-root for an --index elsewhere). The charts stay in the registry:
clusters that installed the version keep running it, and subscribers'
rollback protection is unaffected (the new index is newer). kubepkg
clients ignore the "withdrawn:" key and simply no longer see the version.

Examples:
  # a chart of kubevirt 1.9.0 build 4 breaks upgrades
  kbuild repo withdraw kubevirt@1.9.0 --build 4 --reason "breaks upgrades from 1.8 (issue 812)" \
    --site _site --sign-key-env KBUILD_SIGN_KEY`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&f.site, "site", "_site", "site directory `DIR` whose index.yaml is changed")
			fs.StringVar(&f.suites, "suites", suite.File, "the suites file; when it exists, every suite under --site that holds the version is changed")
			fs.IntVar(&f.build, "build", 0, "build number of the version to withdraw (required)")
			fs.StringVar(&f.reason, "reason", "", "why, shown in the catalog: one line (required)")
			f.keys.addFlags(fs, "the index")
			fs.DurationVar(&f.expires, "expires", 30*24*time.Hour, "how long subscribers accept the new index")
			f.mergeFlags.addFlags(fs)
			f.timeoutFlag.addFlags(fs, "the --index site")
		},
		Run: f.run,
	}
}

func (f *repoWithdrawFlags) run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 || !strings.Contains(args[0], "@") {
		return usagef("withdraw takes one NAME@VERSION")
	}
	pkg, ver, _ := strings.Cut(args[0], "@")
	ver = strings.TrimPrefix(ver, "v")
	switch {
	case f.build < 1:
		return usagef("--build N is required: the build number of %s to withdraw", args[0])
	case strings.TrimSpace(f.reason) == "":
		return usagef("--reason TEXT is required: it is shown to users in the catalog")
	case len(f.keys.files) == 0 && f.keys.env == "":
		return usagef("withdraw needs the signing key: --sign-key FILE or --sign-key-env VAR")
	case f.expires <= 0:
		return usagef("--expires %s: a re-signed index must expire", f.expires)
	}
	if err := f.mergeFlags.check(); err != nil {
		return err
	}
	signers, err := f.keys.signers(env)
	if err != nil {
		return err
	}
	generated, err := epochOrNow(env)
	if err != nil {
		return err
	}
	if now := time.Now().UTC().Truncate(time.Second); generated.Before(now) {
		generated = now // a withdrawal is news: subscribers must see a newer index
	}
	c, found, err := suite.Load(f.suites)
	if err != nil {
		return err
	}
	if !found {
		return f.withdraw(ctx, env, f.site, pkg, ver, signers, generated)
	}
	if f.ref != "" {
		return usagef("--index names one index; with %s every suite under --site is changed: restore the site first", f.suites)
	}
	done := 0
	for _, s := range c.Names() {
		dir := filepath.Join(f.site, s)
		if _, err := os.Stat(filepath.Join(dir, publish.IndexFile)); err != nil {
			continue
		}
		err := f.withdraw(ctx, env, dir, pkg, ver, signers, generated)
		if errors.Is(err, index.ErrNotPublished) {
			fmt.Fprintf(env.Stdout, "suite %s does not hold %s build %d\n", s, args[0], f.build)
			continue
		}
		if err != nil {
			return fmt.Errorf("suite %s: %w", s, err)
		}
		done++
	}
	if done == 0 {
		return fmt.Errorf("no suite of %s holds %s build %d (suites: %s); nothing to withdraw", f.site, args[0], f.build, strings.Join(c.Names(), ", "))
	}
	return nil
}

// withdraw withdraws pkg ver build f.build from the site in dir.
func (f *repoWithdrawFlags) withdraw(ctx context.Context, env *Env, dir, pkg, ver string, signers []index.Signer, generated time.Time) error {
	opts := []publish.Option{publish.WithSite(dir), publish.WithSigners(signers...), publish.WithGenerated(generated),
		publish.WithExpires(f.expires), publish.WithTimeout(f.timeout), publish.WithOutput(env.Stdout, env.Stderr)}
	if f.ref != "" {
		trust, err := f.mergeTrust(signers)
		if err != nil {
			return err
		}
		opts = append(opts, publish.WithMerge(f.ref, trust, false))
	}
	p, err := publish.New(opts...)
	if err != nil {
		return err
	}
	w, res, err := p.Withdraw(ctx, pkg, ver, f.build, f.reason)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "withdrew %s (digest %s): %s\n", w, w.Digest, w.Reason)
	printSigned(env, res, signers)
	return nil
}

// repoVerifyFlags are the flags of repo verify.
type repoVerifyFlags struct {
	indexFlags
	timeoutFlag
	plainHTTPFlag
	state    string
	charts   bool
	evidence string
}

func newRepoVerifyCmd() *Command {
	f := &repoVerifyFlags{}
	return &Command{
		Name:    "verify",
		Usage:   "kbuild repo verify --index REF (--public-key FILE... [--threshold N] | --root-key FILE... [--root-threshold N]) [--state FILE] [--charts]",
		Summary: "Verify a published index as a subscriber does.",
		Help: `Fetches index.yaml and index.yaml.sig (and, with --root-key, root.yaml and
root/1.yaml … root/N.yaml) of --index (a site directory, an index.yaml or an
http(s) URL; given as the argument, the old spelling, it still works for one
release) and checks, in
a subscriber's order: each root version signed by the previous one's root
keys and its own, from the pinned keys on; the newest root not expired;
index.yaml signed by a threshold of trusted keys (the root's index role);
its expiry; every spec against its digest; delegated package versions
signed by their delegation (those without enough signatures are dropped,
with a warning). With --state FILE it refuses an index or root older than
the one recorded, or a root that differs from the recorded version (a
fork), then records the new one. With --charts it pulls every pinned chart
and compares its archive digest with the pin. With --evidence DIR (a
site's evidence/, written by 'kbuild attest') it verifies the test evidence
of every version the index holds: signed by the root's qa role, about
exactly the digests the index pins, not expired.

Expiry is checked whichever way the keys are given, which is stricter than
kubepkg: a kubepkg cluster whose Repository pins trust.rootKeys refuses an
expired index (and one without expires), but one pinned with plain
publicKeys never reads expires, so for it an old signed index stays valid
until its key is rotated. Indexes kubepkg writes are read as kubepkg reads
them: build 0, versions with a leading v, no generated time or apiVersion,
and unknown fields (ignored with a warning; a version whose spec has one is
left out, with a warning naming the package, version and field).

Exit status: 0 verified, 1 refused (the message says why; a file over its
documented size limit is refused too), 3 the site could not be read (no
connection, a missing index, a server that stalls). The mistake to avoid: trusting keys fetched from the site
itself — pass keys you got out of band.

Examples:
  # verify a site with its index key
  kbuild repo verify --index https://example.github.io/packages/index.yaml --public-key keys/index.pub

  # under a root of trust, remembering what was accepted
  kbuild repo verify --index https://example.github.io/packages/ --root-key keys/root1.pub --root-key keys/root2.pub --root-threshold 2 --state .kbuild-state.json

  # a local site, and every chart it pins (loopback registry)
  kbuild repo verify --index _site/index.yaml --public-key keys/index.pub --charts --plain-http

  # the stable suite and the test evidence of what it holds
  kbuild repo verify --index _site/stable/index.yaml --root-key keys/root.pub --evidence _site/evidence`,
		Flags: func(fs *pflag.FlagSet) {
			f.indexFlags.addFlags(fs, "to verify (required)")
			fs.StringVar(&f.state, "state", "", "file `FILE` recording the last accepted index and root; refuses rollbacks and forks, then is updated")
			fs.BoolVar(&f.charts, "charts", false, "also pull every chart and check its archive digest against the pin")
			f.plainHTTPFlag.addFlags(fs, "for --charts")
			f.timeoutFlag.addFlags(fs, "the site or a registry")
			fs.StringVar(&f.evidence, "evidence", "", "directory `DIR` of test evidence (a site's evidence/) to verify for the versions the index holds; needs --root-key")
		},
		Run: f.run,
	}
}

func (f *repoVerifyFlags) run(ctx context.Context, env *Env, args []string) error {
	ref := f.ref
	switch {
	case ref == "" && len(args) == 1:
		ref = args[0]
		fmt.Fprintf(env.Stderr, "warning: kbuild repo verify: the index as an argument is deprecated and goes away in the next release; use --index %s\n", ref)
	case ref == "" || len(args) > 0:
		return usagef("verify takes one --index REF (a site directory, index.yaml or http(s) URL) and no arguments")
	}
	if f.evidence != "" && len(f.rootKeys) == 0 {
		return usagef("--evidence needs --root-key: evidence is signed by the root's qa role")
	}
	trust, err := f.require("verify")
	if err != nil {
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
	site, err := publish.Open(ref, fetchsite.WithTimeout(f.timeout))
	if err != nil {
		return err
	}
	tuneGC(env)
	// Without --charts nothing needs the parsed index: check each package
	// as it is read and drop it.
	v, err := site.Verify(ctx, trust, index.VerifyOptions{Now: time.Now(), State: state, DiscardIndex: !f.charts && f.evidence == ""})
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
		n, bad := checkCharts(ctx, env, v.Index, f.plainHTTP, f.timeout)
		if bad > 0 {
			fmt.Fprintf(env.Stderr, "%d of %d charts do not match their pins\n", bad, n)
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
	if f.evidence != "" {
		ok, refused, skipped, err := suite.VerifyEvidence(f.evidence, v.Root, v.Index, time.Now())
		if err != nil {
			fmt.Fprintf(env.Stderr, "error: %v\n", err)
			return &exitError{code: exitFetch}
		}
		for _, r := range refused {
			fmt.Fprintf(env.Stderr, "refused: %s\n", r)
		}
		fmt.Fprintf(env.Stdout, "%s: %d verified, %d refused, %d for versions this index does not hold\n", f.evidence, len(ok), len(refused), skipped)
		if len(refused) > 0 {
			return &exitError{code: 1}
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
