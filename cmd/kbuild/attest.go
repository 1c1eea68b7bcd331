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

// attestFlags are the flags of attest.
type attestFlags struct {
	build   int
	result  string
	env     string
	log     string
	keys    options.SignerFlags
	site    string
	suite   string
	suites  string
	root    string
	expires time.Duration
	out     string
	push    bool
	options.PlainHTTPFlag
	options.TimeoutFlag
	passed []string
	failed []string
}

func newAttestCmd() *Command {
	f := &attestFlags{}
	return &Command{
		Name:    "attest",
		Usage:   "kbuild attest NAME@VERSION --build N --result pass|fail --env kubernetes=1.33,arch=amd64[,KEY=VALUE…] [--log URL] --sign-key FILE --root ROOT.yaml [--site DIR] [--suite SUITE] [-o FILE]",
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
			fs.IntVar(&f.build, "build", 0, "build number of the version tested (required)")
			fs.StringVar(&f.result, "result", "", "pass or fail (required)")
			fs.StringVar(&f.env, "env", "", "the environment tested: kubernetes=MAJOR.MINOR,arch=ARCH[,KEY=VALUE…] (required)")
			fs.StringVar(&f.log, "log", "", "http(s) URL of the test run")
			fs.StringSliceVar(&f.passed, "passed", nil, "names of the tests that passed (e.g. install,upgrade,rollback); a suite's policy may require some")
			fs.StringSliceVar(&f.failed, "failed", nil, "names of the tests that failed (with --result fail)")
			f.keys.AddFlags(fs, "the evidence (a key of the root's qa role)")
			addAlias(fs, "key", "", "sign-key")
			addAlias(fs, "key-env", "", "sign-key-env")
			fs.StringVar(&f.site, "site", "_site", "site directory `DIR` holding the signed index (or the site's https:// URL, with -o)")
			fs.StringVar(&f.suite, "suite", "", "suite whose index is read (default: the first suite of --suites)")
			fs.StringVar(&f.suites, "suites", suite.File, "the suites file; without it the site holds one index")
			fs.StringVar(&f.root, "root", "", "the root of trust `FILE` (root.yaml, with root/N.yaml beside it) with the qa role (required)")
			fs.DurationVar(&f.expires, "expires", 90*24*time.Hour, "how long the evidence counts")
			options.AddOutputFlag(fs, &f.out, "", "the evidence to `FILE` instead of into the site")
			fs.BoolVar(&f.push, "push", false, "also attach the evidence to the charts in the registry as OCI referrers")
			f.PlainHTTPFlag.AddFlags(fs, "for --push")
			f.TimeoutFlag.AddFlags(fs, "a registry that does not start answering, with --push,")
		},
		Args: exactArgs(1, "attest takes one NAME@VERSION"),
		Run:  f.run,
	}
}

func (f *attestFlags) run(ctx context.Context, env *Env, args []string) error {
	target, err := evidence.ParseTarget(args[0], f.build)
	if err != nil {
		return usagef("%v", err)
	}
	switch {
	case f.result == "":
		return usagef("--result pass|fail is required")
	case f.env == "":
		return usagef("--env is required, e.g. --env kubernetes=1.33,arch=amd64,runtime=containerd")
	case len(f.keys.Files) == 0 && f.keys.Env == "":
		return usagef("attest needs a qa key: --sign-key FILE or --sign-key-env VAR")
	case f.root == "":
		return usagef("--root ROOT.yaml is required: evidence counts only for the root's qa role")
	case f.expires <= 0:
		return usagef("--expires %s: evidence must expire", f.expires)
	}
	e, err := evidence.ParseEnv(f.env)
	if err != nil {
		return usagef("%v", withHint(err))
	}
	signers, err := f.keys.Signers(env)
	if err != nil {
		return err
	}
	issued, err := epochOrNow(env)
	if err != nil {
		return err
	}
	a := &suite.Attest{Target: target, Result: f.result, Env: e, Log: f.log, Passed: f.passed, Failed: f.failed,
		Signers: signers, Root: f.root, Site: f.site, Suite: f.suite, SuitesFile: f.suites, Issued: issued, Expires: f.expires,
		Out: f.out, Push: f.push, PlainHTTP: f.PlainHTTP, Timeout: f.Timeout, Stderr: env.Stderr}
	res, err := a.Run(ctx)
	if errors.Is(err, suite.ErrSiteURL) {
		return usagef("--site %s is a published site: write the evidence to a file with -o (evidence/… in the recipes repository, committed by pull request)", f.site)
	}
	if res == nil {
		return err
	}
	res.WriteText(env.Stdout, target, f.result)
	return err
}
