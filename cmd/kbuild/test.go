package main

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/qualify"
)

type testFlags struct {
	options.IndexFlags
	options.TimeoutFlag
	options.PlainHTTPFlag
	build               int
	variant, from       string
	noUpgrade           bool
	kubeconfig, context string
	wait                time.Duration
	junit, summary, log string
	attest              bool
	keys                options.SignerFlags
	root, out, logURL   string
	expires             time.Duration
	untested            string
}

func newTestCmd() *Command {
	f := &testFlags{}
	return &Command{
		Name:    "test",
		Usage:   "kbuild test NAME@VERSION --build N --index REF (--public-key FILE|--root-key FILE) [--kubeconfig FILE] [--from VERSION+build.M] [--junit FILE] [--attest --sign-key QA.key --root ROOT.yaml -o FILE]",
		Summary: "Install, test, upgrade, roll back and uninstall one exact build (or release set) on a cluster.",
		Help: `test qualifies one build of a package or release set on the cluster of
--kubeconfig, from the index of --index verified with your keys:
  resolve    the target as kubepkg resolves it: a set's members at the builds
             it pins, requires/provides and dependsOn met from the index
  install    every release in dependency order (variant "default", namespace
             and release name from the index), each chart pulled by its pinned
             digest; ready when every object is Current (kstatus), the
             component's healthCheckExprs (CEL) and readyWhen conditions hold
  digests    every container of every pod the releases run uses an image the
             index pins, by digest
  helm-test  the charts' helm test hooks (their logs go to --log-file)
  uninstall  nothing of the releases left but CRDs and what
             helm.sh/resource-policy: keep keeps; no CRD removed
  upgrade    from the build before (or --from), then digests again
  rollback   when the version declares rollback.safe
The environment (kubernetes MAJOR.MINOR, arch, runtime) is read from the
cluster, never from flags. With --attest the result is signed as test
evidence (the same in-toto test-result 'kbuild attest' writes) for the
exact spec, chart and image digests the index pins, with the phases
passed and the log's digest; 'kbuild promote' checks it against the
suite's policy. A failed test is signed too (result fail). A cluster that
stops answering is an error: nothing is signed.

Exit status: 0 passed · 1 a phase failed (or bad input) · 4 the index did not
verify · 5 the cluster or registry stopped answering.

Examples:
  # qualify foreman 3.15.0 build 1 on the current cluster
  kbuild test foreman@3.15.0 --build 1 --index https://example.github.io/packages/unstable/ --public-key keys/index.pub

  # the builds of unstable that evidence/ has nothing for (the qualify workflow)
  kbuild test --untested evidence --index "$SITE/unstable/" --public-key keys/index.pub

  # in CI: JUnit, step summary and signed evidence for the recipes repository
  kbuild test foreman-stack@3.15.0 --build 1 --index "$SITE/unstable/" --root-key keys/root.pub \
    --junit junit.xml --attest --sign-key-env KBUILD_QA_KEY --root keys/root.yaml -o evidence/foreman-stack.intoto.json`,
		Flags: func(fs *pflag.FlagSet) {
			fs.IntVar(&f.build, "build", 0, "build number of the version to test (required)")
			f.IndexFlags.AddFlags(fs, "to install from (required)")
			fs.StringVar(&f.variant, "variant", "", "variant of the target to install (default: default, as kubepkg)")
			fs.StringVar(&f.from, "from", "", "upgrade from `VERSION+build.M` (default: the build before in the index)")
			fs.BoolVar(&f.noUpgrade, "no-upgrade", false, "skip the upgrade and rollback phases")
			fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig `FILE` (default: $KUBECONFIG or ~/.kube/config)")
			fs.StringVar(&f.context, "context", "", "kubeconfig context")
			fs.DurationVar(&f.wait, "wait", 5*time.Minute, "deadline of each Helm action and of each object's readiness")
			fs.StringVar(&f.junit, "junit", "", "write the result as JUnit XML to `FILE`")
			fs.StringVar(&f.summary, "summary", "", "append a Markdown summary to `FILE` (default: $GITHUB_STEP_SUMMARY when set)")
			fs.StringVar(&f.log, "log-file", "", "write the whole log to `FILE` (its digest goes into the evidence)")
			fs.BoolVar(&f.attest, "attest", false, "sign the result as test evidence (needs --sign-key, --root, -o)")
			f.keys.AddFlags(fs, "the evidence (a key of the root's qa role)")
			fs.StringVar(&f.root, "root", "", "your root.yaml `FILE` with the qa role (with --attest)")
			options.AddOutputFlag(fs, &f.out, "", "the evidence to `FILE` (with --attest)")
			fs.StringVar(&f.logURL, "log", "", "http(s) URL of the test run, written into the evidence")
			fs.DurationVar(&f.expires, "expires", 90*24*time.Hour, "how long the evidence counts")
			fs.StringVar(&f.untested, "untested", "", "list the index's builds with no evidence in `DIR` (a set's members go with the set), one 'NAME@VERSION BUILD' a line, and exit")
			f.PlainHTTPFlag.AddFlags(fs, "")
			f.TimeoutFlag.AddFlags(fs, "a registry or site that stalls")
		},
		Run: f.run,
	}
}

func (f *testFlags) run(ctx context.Context, env *Env, args []string) error {
	if f.untested != "" && (len(args) != 0 || f.Ref == "") {
		return usagef("--untested DIR takes no NAME@VERSION and needs --index REF")
	}
	var target evidence.Target
	var err error
	if f.untested == "" {
		if len(args) != 1 {
			return usagef("test takes one NAME@VERSION")
		}
		if target, err = evidence.ParseTarget(args[0], f.build); err != nil {
			return usagef("%v", err)
		}
		if f.Ref == "" {
			return usagef("--index REF is required")
		}
	}
	if f.attest && f.untested == "" && (f.out == "" || f.root == "" || !f.keys.Given()) {
		return usagef("--attest needs --sign-key (or --sign-key-env), --root and -o FILE")
	}
	a := &qualify.Test{Index: f.Ref, Timeout: f.Timeout, Untested: f.untested, LogFile: f.log, Root: f.root, Stdout: env.Stdout, Stderr: env.Stderr,
		Output: qualify.Output{JUnit: f.junit, Summary: cmp.Or(f.summary, env.Getenv("GITHUB_STEP_SUMMARY")), GitHub: env.Getenv("GITHUB_ACTIONS") == "true"},
		Qualification: qualify.Qualification{Target: target, Variant: f.variant, NoUpgrade: f.noUpgrade, Kubeconfig: f.kubeconfig,
			Context: f.context, Timeout: f.wait, PlainHTTP: plainhttp.Policy{Loopback: f.PlainHTTP}, Progress: func(s string) { options.Progress(env)("%s", s) }}}
	if f.from != "" && f.untested == "" {
		if a.Qualification.From, err = qualify.ParseFrom(target.Package, f.from); err != nil {
			return usagef("--from %v", err)
		}
	}
	if f.attest && f.untested == "" {
		if a.Output.Signers, err = f.keys.Signers(env); err != nil {
			return err
		}
		if a.Output.Issued, err = epochOrNow(env); err != nil {
			return err
		}
		a.Output.Evidence, a.Output.Expires, a.Output.LogURL = f.out, a.Output.Issued.Add(f.expires), f.logURL
	}
	if a.Trust, err = f.Require("test"); err != nil {
		return err
	}
	tuneGC(env)
	res, err := a.Run(ctx)
	if res != nil {
		for _, t := range res.Untested {
			fmt.Fprintf(env.Stdout, "%s@%s %d\n", t.Package, t.Version, t.Build)
		}
	}
	if err != nil || f.untested != "" {
		return err
	}
	if !res.Result.Pass() {
		return &exitError{Code: exitFailed}
	}
	return nil
}
