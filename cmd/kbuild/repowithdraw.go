package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/suite"
)

// repoWithdrawFlags are the flags of repo withdraw.
type repoWithdrawFlags struct {
	site    string
	suites  string
	build   int
	reason  string
	keys    options.SignerFlags
	expires time.Duration
	options.MergeFlags
	options.TimeoutFlag
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
'kbuild promote' carries the tombstone into the others; every suite's
page of the package then says where the build is withdrawn, and with
rootSuite the site root's copy of the first suite is renewed.

The index is verified first, with the signing keys (or --public-key,
--root-key or --index-root for an --index elsewhere). Subscribers'
rollback protection is unaffected (the new index is newer). kubepkg
clients ignore the "withdrawn:" key and simply no longer see the build,
so a cluster running it does not keep it: kubepkg's operator moves each
Package running it to the newest build left that meets the Package's
spec.version — another build of the same version, or another patch
release within ~MAJOR.MINOR (what 'kubepkg install' writes), older or
newer, so possibly a downgrade. Only when nothing left meets spec.version
does the cluster keep running the withdrawn build (its charts stay in the
registry), and a fresh install with that constraint then finds no
version. withdraw prints what happens for spec.version ~MAJOR.MINOR and
=VERSION.

Examples:
  # a chart of kubevirt 1.9.0 build 4 breaks upgrades
  kbuild repo withdraw kubevirt@1.9.0 --build 4 --reason "breaks upgrades from 1.8 (issue 812)" \
    --site _site --sign-key-env KBUILD_SIGN_KEY`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&f.site, "site", "_site", "site directory `DIR` whose index.yaml is changed")
			fs.StringVar(&f.suites, "suites", suite.File, "the suites file; when it exists, every suite under --site that holds the version is changed")
			fs.IntVar(&f.build, "build", 0, "build number of the version to withdraw (required)")
			fs.StringVar(&f.reason, "reason", "", "why, shown in the catalog: one line (required)")
			f.keys.AddFlags(fs, "the index")
			fs.DurationVar(&f.expires, "expires", 30*24*time.Hour, "how long subscribers accept the new index")
			f.MergeFlags.AddFlags(fs)
			f.TimeoutFlag.AddFlags(fs, "the --index site")
		},
		Run: f.run,
	}
}

func (f *repoWithdrawFlags) run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 || !strings.Contains(args[0], "@") {
		return usagef("withdraw takes one NAME@VERSION")
	}
	pkg, ver, _ := strings.Cut(args[0], "@")
	ver = spec.CanonicalVersion(ver) // the published spelling: v1.2.3 is 1.2.3
	switch {
	case f.build < 1:
		return usagef("--build N is required: the build number of %s@%s to withdraw", pkg, ver)
	case strings.TrimSpace(f.reason) == "":
		return usagef("--reason TEXT is required: it is shown to users in the catalog")
	case len(f.keys.Files) == 0 && f.keys.Env == "":
		return usagef("withdraw needs the signing key: --sign-key FILE or --sign-key-env VAR")
	case f.expires <= 0:
		return usagef("--expires %s: a re-signed index must expire", f.expires)
	}
	if err := f.MergeFlags.Check(); err != nil {
		return err
	}
	signers, err := f.keys.Signers(env)
	if err != nil {
		return err
	}
	generated, err := newsTime(env) // a withdrawal is news
	if err != nil {
		return err
	}
	a := &suite.Withdraw{Site: f.site, SuitesFile: f.suites, Package: pkg, Version: ver, Build: f.build, Reason: f.reason,
		Signers: signers, Generated: generated, Expires: f.expires, Merge: f.Ref, Timeout: f.Timeout, Stderr: env.Stderr}
	if a.MergeTrust, err = f.MergeTrust(signers); err != nil {
		return err
	}
	res, err := a.Run(ctx)
	var ie *publish.InputError
	switch {
	case errors.As(err, &ie):
		return fmt.Errorf("--%s: %w", ie.Input, err)
	case errors.Is(err, suite.ErrMergeWithSuites):
		return usagef("--index names one index; with %s every suite under --site is changed: restore the site first", f.suites)
	}
	if res != nil {
		res.WriteText(env.Stdout, signers)
	}
	return err
}
