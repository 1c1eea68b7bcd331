package main

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/qualify"
)

func newTestCmd() *Command {
	var (
		a      = &qualify.Test{}
		q, o   = &a.Qualification, &a.Output
		index  options.IndexFlags
		build  int
		from   string
		attest bool
		keys   options.SignerFlags
		out    string
	)
	return &Command{
		Use:     "test NAME@VERSION --build N --index REF (--public-key FILE|--root-key FILE) [--kubeconfig FILE] [--from VERSION+build.M] [--junit FILE] [--attest --sign-key QA.key --root ROOT.yaml -o FILE]",
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
			fs.IntVar(&build, "build", 0, "build number of the version to test (required)")
			index.AddFlags(fs, "to install from (required)")
			fs.StringVar(&q.Variant, "variant", "", "variant of the target to install (default: default, as kubepkg)")
			fs.StringVar(&from, "from", "", "upgrade from `VERSION+build.M` (default: the build before in the index)")
			fs.BoolVar(&q.NoUpgrade, "no-upgrade", false, "skip the upgrade and rollback phases")
			fs.StringVar(&q.Kubeconfig, "kubeconfig", "", "kubeconfig `FILE` (default: $KUBECONFIG or ~/.kube/config)")
			fs.StringVar(&q.Context, "context", "", "kubeconfig context")
			fs.DurationVar(&q.Timeout, "wait", 5*time.Minute, "deadline of each Helm action and of each object's readiness")
			fs.StringVar(&o.JUnit, "junit", "", "write the result as JUnit XML to `FILE`")
			fs.StringVar(&o.Summary, "summary", "", "append a Markdown summary to `FILE` (default: $GITHUB_STEP_SUMMARY when set)")
			fs.StringVar(&a.LogFile, "log-file", "", "write the whole log to `FILE` (its digest goes into the evidence)")
			fs.BoolVar(&attest, "attest", false, "sign the result as test evidence (needs --sign-key, --root, -o)")
			keys.AddFlags(fs, "the evidence (a key of the root's qa role)")
			fs.StringVar(&a.Root, "root", "", "your root.yaml `FILE` with the qa role (with --attest)")
			options.AddOutputFlag(fs, &out, "", "the evidence to `FILE` (with --attest)")
			fs.StringVar(&o.LogURL, "log", "", "http(s) URL of the test run, written into the evidence")
			fs.DurationVar(&o.Expires, "expires", 90*24*time.Hour, "how long the evidence counts")
			fs.StringVar(&a.Untested, "untested", "", "list the index's builds with no evidence in `DIR` (a set's members go with the set), one 'NAME@VERSION BUILD' a line, and exit")
			options.AddPlainHTTPFlag(fs, &q.PlainHTTP.Loopback, "")
			options.AddTimeoutFlag(fs, &a.Timeout, "a registry or site that stalls")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if a.Untested != "" && (len(args) != 0 || index.Ref == "") {
				return usagef("--untested DIR takes no NAME@VERSION and needs --index REF")
			}
			var err error
			if a.Untested == "" {
				if len(args) != 1 {
					return usagef("test takes one NAME@VERSION")
				}
				if q.Target, err = evidence.ParseTarget(args[0], build); err != nil {
					return usagef("%v", err)
				}
				if index.Ref == "" {
					return usagef("--index REF is required")
				}
				if attest && (out == "" || a.Root == "" || !keys.Given()) {
					return usagef("--attest needs --sign-key (or --sign-key-env), --root and -o FILE")
				}
				if q.From, err = qualify.ParseFrom(q.Target.Package, from); err != nil {
					return usagef("--from %v", err)
				}
				if attest {
					if o.Signers, err = keys.Signers(env); err != nil {
						return err
					}
					if o.Issued, err = epochOrNow(env); err != nil {
						return err
					}
					o.Evidence = out
				}
			}
			a.Index = index.Ref
			a.Stdout, a.Stderr = env.Stdout, env.Stderr
			o.Summary = cmp.Or(o.Summary, env.Getenv("GITHUB_STEP_SUMMARY"))
			o.GitHub = env.Getenv("GITHUB_ACTIONS") == "true"
			q.Progress = func(s string) { options.Progress(env)("%s", s) }
			if a.Trust, err = index.Require("test"); err != nil {
				return err
			}
			tuneGC(env)
			res, err := a.Run(ctx)
			for _, t := range res.Untested {
				fmt.Fprintf(env.Stdout, "%s@%s %d\n", t.Package, t.Version, t.Build)
			}
			if err != nil || a.Untested != "" {
				return err
			}
			if !res.Result.Pass() {
				return &exitError{Code: exitFailed}
			}
			return nil
		},
	}
}
