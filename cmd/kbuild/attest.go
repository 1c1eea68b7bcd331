package main

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/suite"
)

func newAttestCmd() *Command {
	var (
		a      = &suite.Attest{}
		build  int
		envArg string
		keys   options.SignerFlags
	)
	return &Command{
		Use:     "attest NAME@VERSION --build N --result pass|fail --env kubernetes=1.33,arch=amd64[,KEY=VALUE…] [--log URL] --sign-key FILE --root ROOT.yaml [--site DIR] [--suite SUITE] [-o FILE]",
		Summary: "Sign test evidence for the exact digests of one published version or release set.",
		Help: `attest writes a signed in-toto Statement (v1) with a test-result predicate
(https://in-toto.io/attestation/test-result/v0.1) saying that NAME VERSION
build N passed or failed its tests in one environment. Its subjects are the
exact spec, chart and image digests the signed index pins for that version
— for a release set, those of every member too — so the evidence is about
those digests and nothing else. The index read is the site's (with
suites.yaml, the --suite's, by default the first), verified against --root.

The key must be one of the root's qa keys ('kbuild trust root new/next
--qa-key'): evidence by any other key, the index key included, does not
count. The evidence expires (--expires) and is written, through a
temporary file and a rename, to the site's
evidence/NAME-VERSION-BUILD/<environment>.intoto.json, where 'kbuild
promote' reads it, or to -o FILE: in CI, QA attests against the published
site (--site https://…) into the recipes repository's evidence/ and
commits it by pull request; the next 'kbuild publish' verifies it, copies
it into the site and attaches it to the charts. --env needs kubernetes (MAJOR.MINOR) and
arch; runtime and other keys are free. With --push the evidence is also
attached to every chart of the version (and of each set member) in the
registry as an OCI referrer of the chart manifest the site's build info
names, beside the build provenance.

Examples:
  # the end-to-end tests of foreman 3.15.0 build 1 passed on Kubernetes 1.33, amd64
  kbuild attest foreman@3.15.0 --build 1 --result pass \
    --env kubernetes=1.33,arch=amd64,runtime=containerd --passed install,upgrade,rollback \
    --log https://github.com/acme/packages/actions/runs/42 --sign-key keys/qa.key --root keys/root.yaml

  # the whole stack failed on arm64
  kbuild attest foreman-stack@3.15.0 --build 1 --result fail --env kubernetes=1.34,arch=arm64 \
    --sign-key-env KBUILD_QA_KEY --root keys/root.yaml`,
		Flags: func(fs *pflag.FlagSet) {
			fs.IntVar(&build, "build", 0, "build number of the version tested (required)")
			fs.StringVar(&a.Result, "result", "", "pass or fail (required)")
			fs.StringVar(&envArg, "env", "", "the environment tested: kubernetes=MAJOR.MINOR,arch=ARCH[,KEY=VALUE…] (required)")
			fs.StringVar(&a.Log, "log", "", "http(s) URL of the test run")
			fs.StringSliceVar(&a.Passed, "passed", nil, "names of the tests that passed (e.g. install,upgrade,rollback); a suite's policy may require some")
			fs.StringSliceVar(&a.Failed, "failed", nil, "names of the tests that failed (with --result fail)")
			keys.AddFlags(fs, "the evidence (a key of the root's qa role)")
			addAlias(fs, "key", "", "sign-key")
			addAlias(fs, "key-env", "", "sign-key-env")
			fs.StringVar(&a.Site, "site", "_site", "site directory `DIR` holding the signed index (or the site's https:// URL, with -o)")
			fs.StringVar(&a.Suite, "suite", "", "suite whose index is read (default: the first suite of --suites)")
			fs.StringVar(&a.SuitesFile, "suites", suite.File, "the suites file; without it the site holds one index")
			fs.StringVar(&a.Root, "root", "", "the root of trust `FILE` (root.yaml, with root/N.yaml beside it) with the qa role (required)")
			fs.DurationVar(&a.Expires, "expires", 90*24*time.Hour, "how long the evidence counts")
			options.AddOutputFlag(fs, &a.Out, "", "the evidence to `FILE` instead of into the site")
			fs.BoolVar(&a.Push, "push", false, "also attach the evidence to the charts in the registry as OCI referrers")
			options.AddPlainHTTPFlag(fs, &a.PlainHTTP, "for --push")
			options.AddTimeoutFlag(fs, &a.Timeout, "a registry that does not start answering, with --push,")
		},
		Args: exactArgs(1, "attest takes one NAME@VERSION"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			var err error
			if a.Target, err = evidence.ParseTarget(args[0], build); err != nil {
				return usagef("%v", err)
			}
			switch {
			case a.Result == "":
				return usagef("--result pass|fail is required")
			case envArg == "":
				return usagef("--env is required, e.g. --env kubernetes=1.33,arch=amd64,runtime=containerd")
			case !keys.Given():
				return usagef("attest needs a qa key: --sign-key FILE or --sign-key-env VAR")
			case a.Root == "":
				return usagef("--root ROOT.yaml is required: evidence counts only for the root's qa role")
			case a.Expires <= 0:
				return usagef("--expires %s: evidence must expire", a.Expires)
			}
			if a.Env, err = evidence.ParseEnv(envArg); err != nil {
				return usagef("%v", withHint(err))
			}
			if a.Signers, err = keys.Signers(env); err != nil {
				return err
			}
			if a.Issued, err = epochOrNow(env); err != nil {
				return err
			}
			a.Stderr = env.Stderr
			res, err := a.Run(ctx)
			if errors.Is(err, suite.ErrSiteURL) {
				return usagef("--site %s is a published site: write the evidence to a file with -o (evidence/… in the recipes repository, committed by pull request)", a.Site)
			}
			if res != nil {
				res.WriteText(env.Stdout, a.Target, a.Result)
			}
			return err
		},
	}
}
