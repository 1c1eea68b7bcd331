package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/releaseset"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/suite"
	"kbuild.dev/kbuild/trust"
)

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
	ver = spec.CanonicalVersion(ver) // the published spelling: v1.2.3 is 1.2.3
	switch {
	case f.build < 1:
		return usagef("--build N is required: the build number of %s@%s to withdraw", pkg, ver)
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
	generated, err := newsTime(env) // a withdrawal is news
	if err != nil {
		return err
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
		if _, err := os.Stat(filepath.Join(dir, sitelayout.IndexFile)); err != nil {
			continue
		}
		err := f.withdraw(ctx, env, dir, pkg, ver, signers, generated)
		if errors.Is(err, index.ErrNotPublished) {
			fmt.Fprintf(env.Stdout, "suite %s does not hold %s@%s build %d\n", s, pkg, ver, f.build)
			continue
		}
		if err != nil {
			return fmt.Errorf("suite %s: %w", s, err)
		}
		done++
	}
	if done == 0 {
		return fmt.Errorf("no suite of %s holds %s@%s build %d (suites: %s); nothing to withdraw", f.site, pkg, ver, f.build, strings.Join(c.Names(), ", "))
	}
	// Every suite's page of the package says where the build is withdrawn.
	pages := &suite.Pages{Site: f.site, Config: c, Signers: signers, Now: time.Now(), Stderr: env.Stderr}
	if _, err := pages.Refresh(ctx, "", []string{pkg}); err != nil {
		return fmt.Errorf("%s@%s build %d is withdrawn and the indexes signed, but the catalog pages were not all rewritten, and some may still show it held: %w", pkg, ver, f.build, err)
	}
	return mirrorRoot(env, c, f.site, "")
}

// withdraw withdraws pkg ver build f.build from the site in dir.
func (f *repoWithdrawFlags) withdraw(ctx context.Context, env *Env, dir, pkg, ver string, signers []trust.Signer, generated time.Time) error {
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
	left := &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{}}
	if res.Left != nil {
		left.Packages[pkg] = res.Left
	}
	for _, fl := range releaseset.AfterWithdrawal(left, pkg, ver) {
		if fl.To == nil {
			fmt.Fprintf(env.Stdout, "kubepkg clusters running it with spec.version %q keep running it: no build left meets %s, and fresh installs of %s find none\n", fl.Constraint, fl.Constraint, fl.Constraint)
			continue
		}
		fmt.Fprintf(env.Stdout, "kubepkg clusters running it with spec.version %q move to %s %s build %d\n", fl.Constraint, pkg, fl.To.Version, fl.To.Build)
	}
	printSigned(env, res, signers)
	return nil
}
