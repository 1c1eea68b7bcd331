package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/suite"
)

func newPromoteCmd() *Command {
	var (
		pr    suite.Promotion
		build int
		keys  options.SignerFlags
	)
	return &Command{
		Use:     "promote NAME@VERSION --build N --to SUITE --root ROOT.yaml --sign-key FILE [--site DIR] [--suites suites.yaml]",
		Summary: "Move a version or release set into the next suite, when its evidence meets the suite's policy.",
		Help: `promote copies NAME VERSION build N — for a release set, the set and every
member — from the suite before SUITE into SUITE, without rebuilding: the
entries are the previous suite's, byte for byte, so a promoted version has
the same digests everywhere. It does so only when the evidence under the
site's evidence/ (written by 'kbuild attest') meets SUITE's policy in
suites.yaml: each piece signed by the root's qa role, about exactly the
digests the index pins, not expired, no failure, and passes on the
Kubernetes minors and architectures the policy names. Evidence that does
not count is listed with why.

A release set in SUITE stays what its clusters run: 'kubepkg install'
writes spec.version ~MAJOR.MINOR on each member and kubepkg's operator
runs the newest build meeting it, so promote refuses a member build or
version (a newer build, a patch release) that members installed with a
set SUITE holds would move to, naming the set, the pinned build and the
build they would move to. Promote a new build of the set that pins it
instead: it brings its members with it.

The previous suite is read as a subscriber reads it, from root version 1
through the chain published beside it; SUITE's index is then re-signed
(it must be signed by the root's index keys) with its root chain, keys,
catalog and the copied versions' build info, provenance and SBOMs, and
replaced last, as publish does. A version withdrawn in the previous suite
is refused, and its tombstone is carried into SUITE. The package pages of
what moved are then rewritten in every suite, each saying which suites
hold each build, read from the suites' verified indexes. Last, the
compatibility matrix of each release set the suites hold is written to
SITE/compat/<set>.html: a row per set version, a column per environment,
pass, fail or untested linking to the evidence, and "supported in SUITE"
where that suite's policy is met.

Examples:
  # foreman 3.15.0 build 1 passed in CI: move it from unstable to testing
  kbuild promote foreman@3.15.0 --build 1 --to testing --root keys/root.yaml --sign-key-env KBUILD_SIGN_KEY

  # the first promotion into stable starts its index
  kbuild promote foreman@3.15.0 --build 1 --to stable --allow-new --root keys/root.yaml --sign-key-env KBUILD_SIGN_KEY

  # the whole stack, tested on two Kubernetes minors and both architectures
  kbuild promote foreman-stack@3.15.0 --build 1 --to stable --root keys/root.yaml --sign-key keys/index.key`,
		Flags: func(fs *pflag.FlagSet) {
			fs.IntVar(&build, "build", 0, "build number of the version to promote (required)")
			fs.StringVar(&pr.To, "to", "", "the suite to promote into (required)")
			fs.StringVar(&pr.Site, "site", "_site", "site directory `DIR` holding <suite>/index.yaml and evidence/")
			fs.StringVar(&pr.SuitesFile, "suites", suite.File, "the suites file")
			fs.StringVar(&pr.Root, "root", "", "the root of trust `FILE` (root.yaml, with root/N.yaml beside it) (required)")
			keys.AddFlags(fs, "the suite's index")
			fs.DurationVar(&pr.Expires, "expires", 30*24*time.Hour, "how long subscribers accept the suite's new index")
			fs.BoolVar(&pr.AllowNew, "allow-new", false, "start a new index when the site has none for SUITE (only for its first promotion)")
		},
		Args: exactArgs(1, "promote takes one NAME@VERSION"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			var err error
			if pr.Target, err = evidence.ParseTarget(args[0], build); err != nil {
				return usagef("%v", err)
			}
			switch {
			case pr.To == "":
				return usagef("--to SUITE is required")
			case pr.Root == "":
				return usagef("--root ROOT.yaml is required: evidence is checked against its qa role")
			case !keys.Given():
				return usagef("promote needs the index signing key: --sign-key FILE or --sign-key-env VAR")
			case pr.Expires <= 0:
				return usagef("--expires %s: a re-signed index must expire", pr.Expires)
			}
			if pr.Signers, err = keys.Signers(env); err != nil {
				return err
			}
			if pr.Generated, err = newsTime(env); err != nil { // a promotion is news
				return err
			}
			pr.Stderr = env.Stderr
			out, err := suite.Promote(ctx, pr)
			switch {
			case errors.Is(err, suite.ErrNoEvidence):
				return fmt.Errorf("%w: run the tests and 'kbuild attest %s@%s --build %d'", err, pr.Target.Package, pr.Target.Version, pr.Target.Build)
			case err != nil && !errors.Is(err, suite.ErrCompat):
				return err
			}
			out.WriteText(env.Stdout, env.Stderr, pr.Site, pr.Target)
			return err
		},
	}
}
