package main

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/suite"
)

func newRepoWithdrawCmd() *Command {
	var (
		a     = &suite.Withdraw{}
		keys  options.SignerFlags
		merge options.MergeFlags
	)
	return &Command{
		Use:     "withdraw NAME@VERSION --build N --reason TEXT [--site DIR] --sign-key FILE",
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
			fs.StringVar(&a.Site, "site", "_site", "site directory `DIR` whose index.yaml is changed")
			fs.StringVar(&a.SuitesFile, "suites", suite.File, "the suites file; when it exists, every suite under --site that holds the version is changed")
			fs.IntVar(&a.Build, "build", 0, "build number of the version to withdraw (required)")
			fs.StringVar(&a.Reason, "reason", "", "why, shown in the catalog: one line (required)")
			keys.AddFlags(fs, "the index")
			fs.DurationVar(&a.Expires, "expires", 30*24*time.Hour, "how long subscribers accept the new index")
			merge.AddFlags(fs)
			options.AddTimeoutFlag(fs, &a.Timeout, "the --index site")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) != 1 || !strings.Contains(args[0], "@") {
				return usagef("withdraw takes one NAME@VERSION")
			}
			a.Package, a.Version, _ = strings.Cut(args[0], "@")
			a.Version = spec.CanonicalVersion(a.Version) // the published spelling: v1.2.3 is 1.2.3
			switch {
			case a.Build < 1:
				return usagef("--build N is required: the build number of %s@%s to withdraw", a.Package, a.Version)
			case strings.TrimSpace(a.Reason) == "":
				return usagef("--reason TEXT is required: it is shown to users in the catalog")
			case !keys.Given():
				return usagef("withdraw needs the signing key: --sign-key FILE or --sign-key-env VAR")
			case a.Expires <= 0:
				return usagef("--expires %s: a re-signed index must expire", a.Expires)
			}
			err := merge.Check()
			if err != nil {
				return err
			}
			if a.Signers, err = keys.Signers(env); err != nil {
				return err
			}
			if a.Generated, err = newsTime(env); err != nil { // a withdrawal is news
				return err
			}
			if a.MergeTrust, err = merge.MergeTrust(a.Signers); err != nil {
				return err
			}
			a.Merge = merge.Ref
			a.Stderr = env.Stderr
			res, err := a.Run(ctx)
			if errors.Is(err, suite.ErrMergeWithSuites) {
				return usagef("--index names one index; with %s every suite under --site is changed: restore the site first", a.SuitesFile)
			}
			res.WriteText(env.Stdout, a.Signers)
			return withInputFlag(err)
		},
	}
}
