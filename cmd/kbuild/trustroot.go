package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// rootFlags are the content flags of trust root new and next: the keys
// and delegations bind into the edit; the thresholds and expiry are set
// on it by [rootFlags.write].
type rootFlags struct {
	fs             *pflag.FlagSet
	edit           trust.RootEdit
	threshold      int
	indexThreshold int
	qaThreshold    int
	expires        time.Duration
	out            string
}

func (f *rootFlags) addFlags(fs *pflag.FlagSet, next bool) {
	f.fs = fs
	fs.StringArrayVar(&f.edit.RootKeys, "root-key", nil, "root public key `FILE` (.pub, or .key for its public half) of the root role; repeat for several")
	fs.IntVar(&f.threshold, "root-threshold", 1, "root signatures needed (the root role's threshold)")
	fs.StringArrayVar(&f.edit.IndexKeys, "index-key", nil, "public key `FILE` of the index role, which signs index.yaml; repeat for several")
	fs.IntVar(&f.indexThreshold, "index-threshold", 1, "index signatures needed")
	fs.StringArrayVar(&f.edit.QAKeys, "qa-key", nil, "public key `FILE` of the qa role, which signs test evidence ('kbuild attest'); repeat for several")
	fs.IntVar(&f.qaThreshold, "qa-threshold", 1, "qa signatures one piece of evidence needs")
	fs.DurationVar(&f.expires, "expires", 365*24*time.Hour, "how long the root is valid")
	fs.StringArrayVar(&f.edit.Delegate, "delegate", nil, "NAME=PATTERN[,PATTERN]: delegate packages matching the globs to NAME's keys")
	fs.StringArrayVar(&f.edit.DelegateKeys, "delegate-key", nil, "NAME=FILE: a key of delegation NAME; repeat for several")
	fs.StringArrayVar(&f.edit.DelegateThresholds, "delegate-threshold", nil, "NAME=N: signatures delegation NAME needs per version (default 1)")
	if next {
		fs.StringArrayVar(&f.edit.Undelegate, "undelegate", nil, "remove delegation NAME")
	}
	options.AddOutputFlag(fs, &f.out, "root.yaml", "the root to `FILE`; root/<N>.yaml beside it gets the same content")
	addAlias(fs, "key", "", "root-key")
	addAlias(fs, "threshold", "", "root-threshold")
}

// write makes the root the flags give, valid from now (with no prev,
// everything is new), writes it (siteread.NewRootFile, NextRootFile) and
// says what it wrote and what it needs.
func (f *rootFlags) write(env *Env, prev string) error {
	now, err := epochOrNow(env)
	if err != nil {
		return err
	}
	if f.expires <= 0 {
		return usagef("--expires %s: a root must expire", f.expires)
	}
	fresh := prev == ""
	if f.fs.Changed("root-threshold") || fresh {
		f.edit.RootThreshold = &f.threshold
	}
	if f.fs.Changed("index-threshold") || fresh {
		f.edit.IndexThreshold = &f.indexThreshold
	}
	if f.fs.Changed("qa-threshold") {
		f.edit.QAThreshold = &f.qaThreshold
	}
	f.edit.Expires = now.Add(f.expires)
	var w *siteread.RootWritten
	if fresh {
		w, err = siteread.NewRootFile(f.out, f.edit)
	} else {
		w, err = siteread.NextRootFile(prev, f.out, f.edit)
	}
	if w != nil && w.Kept != "" {
		fmt.Fprintf(env.Stderr, "wrote %s: subscribers walk every root version\n", w.Kept)
	}
	var ee *trust.RootEditError
	if errors.As(err, &ee) {
		return usagef("%v", withHint(err))
	}
	if err != nil {
		return err
	}
	w.Root.WriteText(env.Stdout, f.out+" and "+w.Chain)
	fmt.Fprintf(env.Stderr, "unsigned: sign it with 'kbuild trust root sign %s --sign-key ROOT.key' (%d root signatures needed", f.out, w.Root.Signed.Roles[trust.RoleRoot].Threshold)
	if !fresh {
		fmt.Fprintf(env.Stderr, ", and the previous version's threshold")
	}
	fmt.Fprintln(env.Stderr, ")")
	return nil
}

func newTrustRootNewCmd() *Command {
	f := &rootFlags{}
	return &Command{
		Use:     "new --root-key FILE... [--root-threshold N] --index-key FILE... [--index-threshold N] [--qa-key FILE... [--qa-threshold N]] [--expires 8760h] [--delegate NAME=PATTERN[,PATTERN]] [--delegate-key NAME=FILE] [--delegate-threshold NAME=N] -o SITE/root.yaml",
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
		Args:  exactArgs(0, "root new takes no arguments"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(f.edit.RootKeys) == 0 || len(f.edit.IndexKeys) == 0 {
				return usagef("root new needs --root-key and --index-key")
			}
			return f.write(env, "")
		},
	}
}
