package main

import (
	"context"
	"os"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/qualify"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

type testFlags struct {
	indexFlags
	timeoutFlag
	plainHTTPFlag
	build               int
	variant, from       string
	noUpgrade           bool
	kubeconfig, context string
	wait                time.Duration
	junit, summary, log string
	attest              bool
	keys                signerFlags
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
			f.indexFlags.addFlags(fs, "to install from (required)")
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
			f.keys.addFlags(fs, "the evidence (a key of the root's qa role)")
			fs.StringVar(&f.root, "root", "", "your root.yaml `FILE` with the qa role (with --attest)")
			addOutputFlag(fs, &f.out, "", "the evidence to `FILE` (with --attest)")
			fs.StringVar(&f.logURL, "log", "", "http(s) URL of the test run, written into the evidence")
			fs.DurationVar(&f.expires, "expires", 90*24*time.Hour, "how long the evidence counts")
			fs.StringVar(&f.untested, "untested", "", "list the index's builds with no evidence in `DIR` (a set's members go with the set), one 'NAME@VERSION BUILD' a line, and exit")
			f.plainHTTPFlag.addFlags(fs, "")
			f.timeoutFlag.addFlags(fs, "a registry or site that stalls")
		},
		Run: f.run,
	}
}

func (f *testFlags) run(ctx context.Context, env *Env, args []string) error {
	if f.untested != "" {
		return f.listUntested(ctx, env, args)
	}
	if len(args) != 1 {
		return usagef("test takes one NAME@VERSION")
	}
	target, err := evidence.ParseTarget(args[0], f.build)
	if err != nil {
		return usagef("%v", err)
	}
	if f.ref == "" {
		return usagef("--index REF is required")
	}
	if f.attest && (f.out == "" || f.root == "" || (len(f.keys.files) == 0 && f.keys.env == "")) {
		return usagef("--attest needs --sign-key (or --sign-key-env), --root and -o FILE")
	}
	var signers []trust.Signer
	if f.attest {
		if signers, err = f.keys.signers(env); err != nil {
			return err
		}
		root, err := siteread.ReadRootFile(f.root)
		if err != nil {
			return err
		}
		if _, _, err := evidence.CheckQASigners(root, f.root, signers); err != nil {
			return err
		}
	}
	tr, err := f.require("test")
	if err != nil {
		return err
	}
	pub, err := siteread.ReadIndex(ctx, f.ref, tr, siteread.WithTimeout(f.timeout))
	if err != nil {
		return err
	}
	q := &qualify.Qualification{
		Index: pub.Verified.Index, Target: target, Variant: f.variant, NoUpgrade: f.noUpgrade,
		Kubeconfig: f.kubeconfig, Context: f.context, Timeout: f.wait, PlainHTTP: plainhttp.Policy{Loopback: f.plainHTTP},
		Progress: func(s string) { progress(env)("%s", s) },
	}
	if f.from != "" {
		if q.From, err = parseFrom(target.Package, f.from); err != nil {
			return usagef("%v", err)
		}
	}
	logFile := f.log
	if logFile == "" {
		logFile = os.DevNull
	}
	lf, err := os.Create(logFile)
	if err != nil {
		return err
	}
	defer lf.Close()
	q.Log = lf
	tuneGC(env)
	res, err := q.Run(ctx)
	if err != nil {
		return err
	}
	return f.report(env, res, target, pub.Verified.Index, signers)
}
