// Package qualify is 'kbuild test': it qualifies one build of a package or
// release set on a real cluster, as Debian's autopkgtest does before
// britney lets a package migrate. From a verified index it resolves what
// a kubepkg client would install (Resolve), pulls every chart by its
// pinned digest, installs the releases in dependency order with Helm's own
// actions, waits until every object is ready (kstatus, the component's
// healthCheckExprs in CEL, its readyWhen conditions), checks that every
// pod runs an image the index pins by digest, runs the charts' helm test
// hooks, upgrades from the build before, rolls back when the version
// declares rollback.safe, and uninstalls, checking that nothing but CRDs
// is left and no CRD is gone. The environment (Kubernetes version,
// architecture, runtime) is read from the cluster. The result feeds the
// JUnit and Markdown reports and the signed test-result evidence that
// 'kbuild promote' checks against a suite's policy.
package qualify
