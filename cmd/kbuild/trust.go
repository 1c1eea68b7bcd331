package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/distindex"
)

func newTrustCmd() *Command {
	return &Command{
		Name:    "trust",
		Usage:   "kbuild trust COMMAND",
		Summary: "Manage the root of trust and delegated signatures of package versions.",
		Help: `A root of trust (root.yaml, and root/<N>.yaml for every version N) says which
keys sign roots, which sign index.yaml, and which packages are delegated to
a team's keys. Subscribers pin the root keys; each new root version must be
signed by the previous version's root keys and its own, so keys can be
rotated without touching subscribers.`,
		Subcommands: []*Command{
			{
				Name:        "root",
				Usage:       "kbuild trust root COMMAND",
				Summary:     "Create, advance and sign root.yaml.",
				Subcommands: []*Command{newTrustRootNewCmd(), newTrustRootNextCmd(), newTrustRootSignCmd()},
			},
			newTrustSignCmd(),
		},
	}
}

// rootFlags are the content flags of trust root new and next.
type rootFlags struct {
	fs             *pflag.FlagSet
	keys           []string
	threshold      int
	indexKeys      []string
	indexThreshold int
	qaKeys         []string
	qaThreshold    int
	expires        time.Duration
	delegate       []string
	delegateKey    []string
	delegateThresh []string
	undelegate     []string
	out            string
}

func (f *rootFlags) addFlags(fs *pflag.FlagSet, next bool) {
	f.fs = fs
	fs.StringArrayVar(&f.keys, "root-key", nil, "root public key `FILE` (.pub, or .key for its public half) of the root role; repeat for several")
	fs.IntVar(&f.threshold, "root-threshold", 1, "root signatures needed (the root role's threshold)")
	fs.StringArrayVar(&f.indexKeys, "index-key", nil, "public key `FILE` of the index role, which signs index.yaml; repeat for several")
	fs.IntVar(&f.indexThreshold, "index-threshold", 1, "index signatures needed")
	fs.StringArrayVar(&f.qaKeys, "qa-key", nil, "public key `FILE` of the qa role, which signs test evidence ('kbuild attest'); repeat for several")
	fs.IntVar(&f.qaThreshold, "qa-threshold", 1, "qa signatures one piece of evidence needs")
	fs.DurationVar(&f.expires, "expires", 365*24*time.Hour, "how long the root is valid")
	fs.StringArrayVar(&f.delegate, "delegate", nil, "NAME=PATTERN[,PATTERN]: delegate packages matching the globs to NAME's keys")
	fs.StringArrayVar(&f.delegateKey, "delegate-key", nil, "NAME=FILE: a key of delegation NAME; repeat for several")
	fs.StringArrayVar(&f.delegateThresh, "delegate-threshold", nil, "NAME=N: signatures delegation NAME needs per version (default 1)")
	if next {
		fs.StringArrayVar(&f.undelegate, "undelegate", nil, "remove delegation NAME")
	}
	addOutputFlag(fs, &f.out, "root.yaml", "the root to `FILE`; root/<N>.yaml beside it gets the same content")
	addAlias(fs, "key", "", "root-key")
	addAlias(fs, "threshold", "", "root-threshold")
}

// apply changes c by the flags given; with fresh, everything is new.
func (f *rootFlags) apply(c *index.RootConfig, now time.Time, fresh bool) error {
	var err error
	if len(f.keys) > 0 || fresh {
		if c.RootKeys, err = loadPublicKeys(f.keys, true); err != nil {
			return err
		}
	}
	if f.fs.Changed("root-threshold") || fresh {
		c.RootThreshold = f.threshold
	}
	if len(f.indexKeys) > 0 || fresh {
		if c.IndexKeys, err = loadPublicKeys(f.indexKeys, true); err != nil {
			return err
		}
	}
	if f.fs.Changed("index-threshold") || fresh {
		c.IndexThreshold = f.indexThreshold
	}
	if len(f.qaKeys) > 0 {
		if c.QAKeys, err = loadPublicKeys(f.qaKeys, true); err != nil {
			return err
		}
		if c.QAThreshold == 0 {
			c.QAThreshold = f.qaThreshold
		}
	}
	if f.fs.Changed("qa-threshold") {
		c.QAThreshold = f.qaThreshold
	}
	if f.expires <= 0 {
		return usagef("--expires %s: a root must expire", f.expires)
	}
	c.Expires = now.Add(f.expires)
	find := func(name string) *index.DelegationConfig {
		for i := range c.Delegations {
			if c.Delegations[i].Name == name {
				return &c.Delegations[i]
			}
		}
		return nil
	}
	for _, name := range f.undelegate {
		if find(name) == nil {
			return fmt.Errorf("--undelegate %s: the root has no such delegation", name)
		}
		c.Delegations = slices.DeleteFunc(c.Delegations, func(d index.DelegationConfig) bool { return d.Name == name })
	}
	for _, v := range f.delegate {
		name, patterns, ok := strings.Cut(v, "=")
		if !ok || name == "" || patterns == "" {
			return usagef("--delegate %q: want NAME=PATTERN[,PATTERN]", v)
		}
		d := find(name)
		if d == nil {
			c.Delegations = append(c.Delegations, index.DelegationConfig{Name: name, Threshold: 1})
			d = &c.Delegations[len(c.Delegations)-1]
		}
		d.Packages = strings.Split(patterns, ",")
	}
	newKeys := map[string][]*index.PublicKey{}
	for _, v := range f.delegateKey {
		name, file, ok := strings.Cut(v, "=")
		if !ok || name == "" || file == "" {
			return usagef("--delegate-key %q: want NAME=FILE", v)
		}
		k, err := loadPublicKey(file, true)
		if err != nil {
			return err
		}
		newKeys[name] = append(newKeys[name], k)
	}
	for name, keys := range newKeys {
		d := find(name)
		if d == nil {
			return usagef("--delegate-key %s=…: no delegation %s; add it with --delegate %s=PATTERN", name, name, name)
		}
		d.Keys = keys
	}
	for _, v := range f.delegateThresh {
		name, n, ok := strings.Cut(v, "=")
		t, err := strconv.Atoi(n)
		if !ok || err != nil {
			return usagef("--delegate-threshold %q: want NAME=N", v)
		}
		d := find(name)
		if d == nil {
			return usagef("--delegate-threshold %s=%d: no delegation %s", name, t, name)
		}
		d.Threshold = t
	}
	return nil
}

func newTrustRootNewCmd() *Command {
	f := &rootFlags{}
	return &Command{
		Name:    "new",
		Usage:   "kbuild trust root new --root-key FILE... [--root-threshold N] --index-key FILE... [--index-threshold N] [--qa-key FILE... [--qa-threshold N]] [--expires 8760h] [--delegate NAME=PATTERN[,PATTERN]] [--delegate-key NAME=FILE] [--delegate-threshold NAME=N] -o SITE/root.yaml",
		Summary: "Create version 1 of the root of trust, unsigned.",
		Help: `Writes root version 1 to -o and to root/1.yaml beside it: the root keys and
threshold, the index keys and threshold, optionally the qa keys and
threshold (who signs test evidence: without a qa role no evidence counts,
so CI's index key alone cannot vouch for tests), and delegations of packages
(path globs; the first delegation with a matching pattern wins) to a team's
keys. Key files may be public keys, or private keys of which only the
public half is used. The root is not signed: each root key holder then runs
'kbuild trust root sign'. Subscribers pin the root keys. An existing file is
not overwritten: a new root of trust is a new repository.

Examples:
  # two root keys of which both must sign, one index key
  kbuild trust root new --root-key keys/root1.pub --root-key keys/root2.pub --root-threshold 2 --index-key keys/index.pub -o _site/root.yaml

  # a qa role: two of the three test keys must sign each piece of evidence
  kbuild trust root new --root-key keys/root.pub --index-key keys/index.pub \
    --qa-key keys/qa1.pub --qa-key keys/qa2.pub --qa-key keys/qa3.pub --qa-threshold 2 -o _site/root.yaml

  # delegate the kubevirt packages to the virtualization team
  kbuild trust root new --root-key keys/root.pub --index-key keys/index.pub \
    --delegate team-virt='kubevirt*,cdi' --delegate-key team-virt=keys/virt.pub -o _site/root.yaml`,
		Flags: func(fs *pflag.FlagSet) { f.addFlags(fs, false) },
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) != 0 {
				return usagef("root new takes no arguments")
			}
			if len(f.keys) == 0 || len(f.indexKeys) == 0 {
				return usagef("root new needs --root-key and --index-key")
			}
			now, err := epochOrNow(env)
			if err != nil {
				return err
			}
			var c index.RootConfig
			if err := f.apply(&c, now, true); err != nil {
				return err
			}
			r, err := index.NewRoot(c)
			if err != nil {
				return err
			}
			if _, err := os.Stat(f.out); err == nil {
				return fmt.Errorf("%s exists; refusing to overwrite a root of trust (use 'kbuild trust root next' to change it)", f.out)
			}
			return writeRoot(env, f.out, r, true)
		},
	}
}

func newTrustRootNextCmd() *Command {
	f := &rootFlags{}
	return &Command{
		Name:    "next",
		Usage:   "kbuild trust root next ROOT.yaml [--root-key FILE...] [--root-threshold N] [--index-key FILE...] [--index-threshold N] [--qa-key FILE... [--qa-threshold N]] [--expires 8760h] [--delegate NAME=PATTERN[,PATTERN]] [--delegate-key NAME=FILE] [--undelegate NAME] -o SITE/root.yaml",
		Summary: "Create the next version of the root, unsigned, changing what the flags say.",
		Help: `Reads ROOT.yaml and writes version N+1 to -o and to root/<N+1>.yaml beside
it, keeping what no flag changes: --root-key replaces the root keys, --index-key
the index keys, --qa-key the qa keys (adding the qa role), --delegate-key NAME=… the keys of delegation NAME;
--delegate NAME=… adds a delegation or replaces its patterns, --undelegate
removes one. The expiry is renewed (--expires from now). The new version
counts only when signed by a threshold of the *previous* version's root
keys and of its own: when rotating root keys, the old holders sign too. The
mistake to avoid: publishing root.yaml before root/<N>.yaml — subscribers
walk every version.

Examples:
  # renew the root before it expires
  kbuild trust root next _site/root.yaml -o _site/root.yaml

  # rotate the index key
  kbuild trust root next _site/root.yaml --index-key keys/index2.pub -o _site/root.yaml

  # stop delegating
  kbuild trust root next _site/root.yaml --undelegate team-virt -o _site/root.yaml`,
		Flags: func(fs *pflag.FlagSet) { f.addFlags(fs, true) },
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) != 1 {
				return usagef("root next takes the current ROOT.yaml")
			}
			prev, err := readRoot(args[0])
			if err != nil {
				return err
			}
			now, err := epochOrNow(env)
			if err != nil {
				return err
			}
			c, err := prev.Config()
			if err != nil {
				return err
			}
			if err := f.apply(&c, now, false); err != nil {
				return err
			}
			r, err := prev.Next(c)
			if err != nil {
				return err
			}
			// Keep the previous version in the chain beside the output.
			if err := writeChainCopy(env, f.out, prev); err != nil {
				return err
			}
			return writeRoot(env, f.out, r, false)
		},
	}
}

func newTrustRootSignCmd() *Command {
	var keys signerFlags
	return &Command{
		Name:    "sign",
		Usage:   "kbuild trust root sign ROOT.yaml --sign-key FILE",
		Summary: "Add one root key's signature to a root.",
		Help: `Signs the root's signed content with the private key --sign-key (or each of
several, or the one in --sign-key-env) and writes the
root back (and root/<N>.yaml beside it, when it holds the same version),
replacing an earlier signature by the same key. A new version needs a
threshold of its own root keys and of the previous version's; a key that is
in neither only adds a signature no one counts.

Examples:
  # each root key holder signs in turn
  kbuild trust root sign _site/root.yaml --sign-key keys/root1.key
  kbuild trust root sign _site/root.yaml --sign-key keys/root2.key`,
		Flags: func(fs *pflag.FlagSet) {
			keys.addFlags(fs, "the root")
			addAlias(fs, "key", "", "sign-key")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) != 1 || !keys.given() {
				return usagef("root sign takes ROOT.yaml and --sign-key FILE")
			}
			r, err := readRoot(args[0])
			if err != nil {
				return err
			}
			signers, err := keys.signers(env)
			if err != nil {
				return err
			}
			for _, k := range signers {
				if !slices.Contains(r.Signed.Roles[index.RoleRoot].KeyIDs, k.KeyID()) {
					fmt.Fprintf(env.Stderr, "note: key %s is not a root key of version %d; its signature counts only for the previous version's root keys\n", k.KeyID(), r.Signed.Version)
				}
				if err := r.Sign(k); err != nil {
					return err
				}
			}
			chain := chainPath(args[0], r.Signed.Version)
			if old, err := readRoot(chain); err == nil {
				od, _ := old.Digest()
				nd, _ := r.Digest()
				if od == nd {
					if err := saveRoot(chain, r); err != nil {
						return err
					}
				}
			}
			if err := saveRoot(args[0], r); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "root version %d now has %d signatures\n", r.Signed.Version, len(r.Signatures))
			return nil
		},
	}
}

func newTrustSignCmd() *Command {
	var keys signerFlags
	return &Command{
		Name:    "sign",
		Usage:   "kbuild trust sign DIST/RECORD.yaml --sign-key FILE",
		Summary: "Sign one built package version with a delegated team key.",
		Help: `Signs the version statement of a build record — package, version, build and
spec digest — with --sign-key and adds the signature to the record's sidecar,
RECORD.sig.yaml, which 'kbuild repo index' carries into the version's
signatures in index.yaml. Under a root that delegates the package, a
version counts for subscribers only with the delegation's threshold of such
signatures. Sign the record that will be published: rebuilding changes
nothing (same digest), but editing the record does.

Examples:
  # the virtualization team signs its build
  kbuild trust sign dist/kubevirt-1.9.0-4.yaml --sign-key keys/virt.key

  # sign every record of a package
  for r in dist/kubevirt-*-[0-9]*.yaml; do case $r in *.build.yaml|*.sig.yaml) ;; *) kbuild trust sign "$r" --sign-key keys/virt.key;; esac; done`,
		Flags: func(fs *pflag.FlagSet) {
			keys.addFlags(fs, "the version statement (a delegation's key)")
			addAlias(fs, "key", "", "sign-key")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) != 1 || !keys.given() {
				return usagef("sign takes one build record and --sign-key FILE")
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			rec, err := index.ParseRecord(data)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if err := index.CheckRecord(rec); err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			signers, err := keys.signers(env)
			if err != nil {
				return err
			}
			sidecar := distindex.SidecarPath(args[0])
			var sigs []index.Signature
			if b, err := os.ReadFile(sidecar); err == nil {
				if sigs, err = index.ParseSignatures(b); err != nil {
					return fmt.Errorf("%s: %w", sidecar, err)
				}
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			var ids []string
			for _, k := range signers {
				sig, err := index.SignVersion(rec, k)
				if err != nil {
					return err
				}
				sigs = index.AddSignature(sigs, sig)
				ids = append(ids, k.KeyID())
			}
			out, err := index.MarshalSignatureList(sigs)
			if err != nil {
				return err
			}
			if err := dist.WriteFile(sidecar, out, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "signed %s %s build %d (keyid %s): %s has %d signature(s)\n",
				rec.Metadata.Name, rec.Spec.Version, rec.Spec.Build, strings.Join(ids, ", "), sidecar, len(sigs))
			return nil
		},
	}
}

func readRoot(path string) (*index.Root, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := index.ParseRoot(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

func saveRoot(path string, r *index.Root) error {
	b, err := r.Marshal()
	if err != nil {
		return err
	}
	return dist.WriteFile(path, b, 0o644)
}

// chainPath is root/<version>.yaml beside the root file at path.
func chainPath(path string, version int) string {
	return filepath.Join(filepath.Dir(path), "root", fmt.Sprintf("%d.yaml", version))
}

// writeChainCopy writes r to root/<N>.yaml beside out unless it is there.
func writeChainCopy(env *Env, out string, r *index.Root) error {
	p := chainPath(out, r.Signed.Version)
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	fmt.Fprintf(env.Stderr, "wrote %s: subscribers walk every root version\n", p)
	return saveRoot(p, r)
}

// writeRoot writes r to out and root/<N>.yaml beside it and says what it
// needs.
func writeRoot(env *Env, out string, r *index.Root, fresh bool) error {
	p := chainPath(out, r.Signed.Version)
	if _, err := os.Stat(p); err == nil && fresh {
		return fmt.Errorf("%s exists; refusing to overwrite a root version", p)
	}
	if err := saveRoot(p, r); err != nil {
		return err
	}
	if err := saveRoot(out, r); err != nil {
		return err
	}
	s := r.Signed
	need := s.Roles[index.RoleRoot].Threshold
	fmt.Fprintf(env.Stdout, "wrote %s and %s: version %d, %d root keys (threshold %d), %d index keys (threshold %d), %d delegations, expires %s\n",
		out, p, s.Version, len(s.Roles[index.RoleRoot].KeyIDs), need, len(s.Roles[index.RoleIndex].KeyIDs), s.Roles[index.RoleIndex].Threshold,
		len(s.Delegations), s.Expires.Format(time.RFC3339))
	if qa, ok := s.Roles[index.RoleQA]; ok {
		fmt.Fprintf(env.Stdout, "qa role: %d keys (threshold %d) sign test evidence\n", len(qa.KeyIDs), qa.Threshold)
	}
	fmt.Fprintf(env.Stderr, "unsigned: sign it with 'kbuild trust root sign %s --sign-key ROOT.key' (%d root signatures needed", out, need)
	if !fresh {
		fmt.Fprintf(env.Stderr, ", and the previous version's threshold")
	}
	fmt.Fprintln(env.Stderr, ")")
	return nil
}
