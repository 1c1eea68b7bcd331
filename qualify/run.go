package qualify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/chartpin"
	"kbuild.dev/kbuild/internal/fault"
	"kbuild.dev/kbuild/internal/plainhttp"
)

// The phases a qualification runs, the names its evidence lists in
// passedTests and failedTests and suite policies require.
const (
	PhaseResolve   = "resolve"
	PhaseInstall   = "install"
	PhaseHelmTest  = "helm-test"
	PhaseDigests   = "digests"
	PhaseUpgrade   = "upgrade"
	PhaseRollback  = "rollback"
	PhaseUninstall = "uninstall"
)

// ErrCluster wraps a fault of the cluster itself (the API server stopped
// answering): no result is given, since nothing was shown either way.
var ErrCluster = fault.New(fault.Unavailable, "the cluster stopped answering")

// Qualification is 'kbuild test': one build of a package or release set,
// from a verified index, installed on a cluster, checked ready with the
// exact digests the index pins, its helm tests run, upgraded from the
// build before it, rolled back when the version says rollback is safe,
// and uninstalled, each step a phase of the result.
type Qualification struct {
	// Index is the verified index of the suite tested.
	Index  *index.RepositoryIndex
	Target evidence.Target
	// Variant of the target to install ("" the first).
	Variant string
	// From is the build to upgrade from; zero picks the newest build in
	// the index older than Target (an older build of the same version, else
	// the newest build of the newest older version); none: no upgrade.
	From evidence.Target
	// NoUpgrade skips the upgrade and rollback phases.
	NoUpgrade bool

	Kubeconfig, Context string
	// Timeout bounds each Helm action and each object's readiness.
	Timeout   time.Duration
	PlainHTTP plainhttp.Policy
	// Log receives the full log: every phase, Helm's own lines, test pod
	// logs. Its sha256 is the result's LogDigest.
	Log io.Writer
	// Progress receives one line per step (may be nil).
	Progress func(string)
}

// Result is what a qualification showed.
type Result struct {
	Plan *Plan
	// From is the plan upgraded from (nil: no upgrade was tested).
	From   *Plan
	Phases []Phase
	// Env is the environment read from the cluster: kubernetes
	// (MAJOR.MINOR), arch, runtime, and the server's exact version.
	Env map[string]string
	// Pods are the pods the releases ran, where, with which images.
	Pods []RanPod
	// LogDigest is sha256:<hex> of everything written to Log.
	LogDigest string
}

// Phase is one step of a qualification.
type Phase struct {
	Name string
	// Detail qualifies the phase: "from foreman 3.14.0 build 2".
	Detail string
	// Err is why it failed; nil passed. Skipped phases have Skipped set.
	Err     error
	Skipped string
	Took    time.Duration
	// CPU is kbuild's own CPU time (user+system) in the phase.
	CPU time.Duration
}

// RanPod is one pod a release ran and where.
type RanPod struct {
	Namespace, Name, Node, Arch, Runtime string
	Images                               []string
}

// Passed returns the names of the phases that passed, sorted.
func (r *Result) Passed() []string {
	return r.names(func(p Phase) bool { return p.Err == nil && p.Skipped == "" })
}

// Failed returns the names of the phases that failed, sorted.
func (r *Result) Failed() []string { return r.names(func(p Phase) bool { return p.Err != nil }) }

func (r *Result) names(keep func(Phase) bool) []string {
	var out []string
	for _, p := range r.Phases {
		if keep(p) && !slices.Contains(out, p.Name) {
			out = append(out, p.Name)
		}
	}
	// a phase that failed anywhere did not pass
	if keep(Phase{}) {
		out = slices.DeleteFunc(out, func(n string) bool {
			return slices.ContainsFunc(r.Phases, func(p Phase) bool { return p.Name == n && p.Err != nil })
		})
	}
	slices.Sort(out)
	return out
}

// Pass reports whether every phase run passed.
func (r *Result) Pass() bool { return len(r.Failed()) == 0 && len(r.Phases) > 0 }

// run holds one qualification's state.
type run struct {
	q      *Qualification
	res    *Result
	c      *cluster
	helm   *helmClient
	log    io.Writer
	charts map[string]*chart.Chart // by archive digest
	start  time.Time
	// made are every object the releases made, by release, over all
	// revisions: what uninstall must remove.
	made map[string][]object
	// owners are the UIDs of the objects of the releases installed now.
	owners map[types.UID]bool
	// parsed are the objects of each manifest read, by namespace and
	// manifest: a revision's manifest is read when it is made and when it
	// is waited for.
	parsed map[[2]string][]object
}

// Run qualifies q.Target. Test failures are in the result (Pass false);
// the error is for what stops the qualification without a verdict: the
// cluster unreachable (ErrCluster), a bad kubeconfig, a cancelled context.
func (q *Qualification) Run(ctx context.Context) (*Result, error) {
	log := newDigestLog(q.Log)
	r := &run{q: q, res: &Result{}, start: time.Now(), log: log, charts: map[string]*chart.Chart{}, made: map[string][]object{}, owners: map[types.UID]bool{}, parsed: map[[2]string][]object{}}
	err := r.all(ctx)
	r.res.LogDigest = log.digest()
	return r.res, err
}

// digestLog is the qualification's log: every write goes to the Log
// writer and into the digest, one write at a time. Helm's client logs
// from goroutines of its own (it deletes the objects of one kind
// concurrently, each goroutine logging), so unserialized writes would
// interleave in the log and corrupt the digest's state.
type digestLog struct {
	mu  sync.Mutex
	out io.Writer
	h   hash.Hash
}

func newDigestLog(out io.Writer) *digestLog {
	if out == nil {
		out = io.Discard
	}
	return &digestLog{out: out, h: sha256.New()}
}

func (l *digestLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.out.Write(p)
	l.h.Write(p[:n]) // the digest is of what the log holds
	return n, err
}

// digest returns sha256:<hex> of everything written.
func (l *digestLog) digest() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return "sha256:" + hex.EncodeToString(l.h.Sum(nil))
}

func (r *run) logf(format string, args ...any) {
	fmt.Fprintf(r.log, format+"\n", args...)
}

func (r *run) progress(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.logf("==> [%6.1fs] %s", time.Since(r.start).Seconds(), msg)
	if r.q.Progress != nil {
		r.q.Progress(msg)
	}
}

// phase runs f as one phase and records it. A failure caused by the
// cluster going away is returned as ErrCluster instead.
func (r *run) phase(ctx context.Context, name, detail string, f func() error) error {
	r.progress("%s %s", name, detail)
	start, cpu := time.Now(), cpuTime()
	err := f()
	p := Phase{Name: name, Detail: detail, Err: err, Took: time.Since(start), CPU: cpuTime() - cpu}
	if err != nil && r.c != nil && (unreachable(err) || ctx.Err() != nil) {
		if aerr := r.c.alive(ctx); aerr != nil || ctx.Err() != nil {
			return fmt.Errorf("%w during %s %s: %v", ErrCluster, name, detail, err)
		}
	}
	if err != nil {
		r.logf("FAIL %s %s: %v", name, detail, err)
	} else {
		r.logf("ok   %s %s (%s)", name, detail, p.Took.Round(time.Millisecond))
	}
	r.res.Phases = append(r.res.Phases, p)
	return nil
}

func (r *run) skip(name, detail, why string) {
	r.logf("skip %s %s: %s", name, detail, why)
	r.res.Phases = append(r.res.Phases, Phase{Name: name, Detail: detail, Skipped: why})
}

func (r *run) failed() bool { return len(r.res.Failed()) > 0 }

func (r *run) all(ctx context.Context) error {
	q := r.q
	if q.Timeout <= 0 {
		q.Timeout = 5 * time.Minute
	}
	var plan *Plan
	if err := r.phase(ctx, PhaseResolve, q.Target.String(), func() (err error) {
		plan, err = Resolve(q.Index, q.Target, q.Variant)
		return err
	}); err != nil {
		return err
	}
	if r.failed() {
		return nil
	}
	r.res.Plan = plan
	for _, p := range plan.Packages {
		r.logf("plan: %s (%s), variant %q", p, p.Why, p.Variant)
	}
	for _, rel := range plan.Releases {
		r.logf("plan: %s chart %s@%s", rel, chartpin.Ref(&rel.Chart), rel.Chart.Digest)
	}
	c, err := connect(q.Kubeconfig, q.Context)
	if err != nil {
		return err
	}
	r.c = c
	if err := c.alive(ctx); err != nil {
		return fmt.Errorf("%w: %v", ErrCluster, err)
	}
	r.helm = &helmClient{kubeconfig: q.Kubeconfig, context: q.Context, cluster: c, timeout: q.Timeout, log: func(f string, a ...any) { r.logf("helm: "+f, a...) }}
	from, err := r.fromPlan()
	if err != nil {
		return err
	}
	if err := r.environment(ctx); err != nil {
		return err
	}
	r.helm.kinds.all = validatesFields(r.res.Env["server"])
	// 1. a fresh install of exactly the target, tested, then removed
	if err := r.phase(ctx, PhaseInstall, plan.Target.String(), func() error { return r.installAll(ctx, plan) }); err != nil {
		return err
	}
	if !r.failed() {
		if err := r.verify(ctx, plan); err != nil {
			return err
		}
	}
	if err := r.phase(ctx, PhaseUninstall, plan.Target.String(), func() error { return r.uninstallAll(ctx, plan) }); err != nil {
		return err
	}
	// 2. an upgrade from the build before, a rollback, a removal
	switch {
	case q.NoUpgrade:
		r.skip(PhaseUpgrade, "", "not asked for")
	case from == nil:
		r.skip(PhaseUpgrade, "", "the index has no older build of "+q.Target.Package+" to upgrade from")
	case r.failed():
		r.skip(PhaseUpgrade, "from "+from.Target.String(), "the install failed")
	default:
		r.res.From = from
		if err := r.upgradePath(ctx, from, plan); err != nil {
			return err
		}
	}
	return nil
}

// verify checks the installed target: the exact digests, and its helm
// tests.
func (r *run) verify(ctx context.Context, plan *Plan) error {
	if err := r.phase(ctx, PhaseDigests, plan.Target.String(), func() error { return r.checkDigests(ctx, plan) }); err != nil {
		return err
	}
	return r.phase(ctx, PhaseHelmTest, plan.Target.String(), func() error {
		var errs []error
		for _, rel := range plan.Releases {
			n, err := r.helm.test(rel, r.log)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: helm test: %w", rel, err))
				continue
			}
			r.logf("%s: %d helm test hook(s) passed", rel, n)
		}
		return errors.Join(errs...)
	})
}

func (r *run) upgradePath(ctx context.Context, from, plan *Plan) error {
	detail := "from " + from.Target.String()
	var setupErr error
	if err := r.phase(ctx, PhaseUpgrade, detail, func() error {
		if err := r.installAll(ctx, from); err != nil {
			setupErr = err
			return fmt.Errorf("installing %s to upgrade from: %w", from.Target, err)
		}
		return r.upgradeAll(ctx, from, plan)
	}); err != nil {
		return err
	}
	if setupErr == nil && !r.failed() {
		if err := r.phase(ctx, PhaseDigests, "after the upgrade "+detail, func() error { return r.checkDigests(ctx, plan) }); err != nil {
			return err
		}
	}
	top := plan.Packages[slices.IndexFunc(plan.Packages, func(p PackageBuild) bool { return p.Name == plan.Target.Package })]
	switch {
	case r.failed():
		r.skip(PhaseRollback, "to "+from.Target.String(), "the upgrade failed")
	case top.Spec.Rollback == nil || !top.Spec.Rollback.Safe:
		r.skip(PhaseRollback, "to "+from.Target.String(), "the version does not declare rollback.safe")
	default:
		if err := r.phase(ctx, PhaseRollback, "to "+from.Target.String(), func() error { return r.rollbackAll(ctx, plan, from) }); err != nil {
			return err
		}
	}
	return r.phase(ctx, PhaseUninstall, "after the upgrade "+detail, func() error { return r.uninstallAll(ctx, plan, from) })
}

// fromPlan resolves what the upgrade starts from.
func (r *run) fromPlan() (*Plan, error) {
	q := r.q
	if q.NoUpgrade {
		return nil, nil
	}
	t := q.From
	if t.Package == "" {
		prev := previousBuild(q.Index, q.Target)
		if prev == nil {
			return nil, nil
		}
		t = *prev
	}
	p, err := Resolve(q.Index, t, q.Variant)
	if err != nil {
		return nil, fmt.Errorf("upgrade from %s: %w", t, err)
	}
	return p, nil
}

// previousBuild returns the build the target replaces: an older build of
// the same version, else the newest build of the newest older version.
func previousBuild(x *index.RepositoryIndex, t evidence.Target) *evidence.Target {
	p := x.Packages[t.Package]
	if p == nil {
		return nil
	}
	vs := slices.Clone(p.Versions)
	index.SortNewestFirst(vs)
	i := slices.IndexFunc(vs, func(v index.IndexVersion) bool { return v.Version == t.Version && v.Build == t.Build })
	if i < 0 || i+1 >= len(vs) {
		return nil
	}
	v := vs[i+1]
	return &evidence.Target{Package: t.Package, Version: v.Version, Build: v.Build}
}

// chart pulls a release's chart by its pinned digest (once).
func (r *run) chart(ctx context.Context, rel Release) (*chart.Chart, error) {
	if c, ok := r.charts[rel.Chart.Digest]; ok {
		return c, nil
	}
	data, err := chartpin.PullPinned(ctx, rel.Chart, r.q.PlainHTTP)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	c, err := loadChart(data)
	if err != nil {
		return nil, fmt.Errorf("%s: chart %s: %w", rel, rel.Chart.Digest, err)
	}
	r.charts[rel.Chart.Digest] = c
	return c, nil
}

// installAll installs the plan's releases step by step: the releases of
// one package wave and component level (see Release) installed, then
// waited for together.
func (r *run) installAll(ctx context.Context, plan *Plan) error {
	rels := slices.Clone(plan.Releases)
	slices.SortStableFunc(rels, func(a, b Release) int {
		if a.Wave != b.Wave {
			return a.Wave - b.Wave
		}
		return a.Level - b.Level
	})
	for i := 0; i < len(rels); {
		j := i
		var made []*release.Release
		for ; j < len(rels) && rels[j].Wave == rels[i].Wave && rels[j].Level == rels[i].Level; j++ {
			hr, err := r.install(ctx, rels[j], nil, "")
			if err != nil {
				return err
			}
			made = append(made, hr)
		}
		for k, hr := range made {
			if err := r.ready(ctx, rels[i+k], hr); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

// installOne installs one release and waits until it is ready.
func (r *run) installOne(ctx context.Context, rel Release, vals map[string]any, why string) error {
	hr, err := r.install(ctx, rel, vals, why)
	if err != nil {
		return err
	}
	return r.ready(ctx, rel, hr)
}

// install installs one release, into its namespace, made first as
// kubepkg's operator makes it.
func (r *run) install(ctx context.Context, rel Release, vals map[string]any, why string) (*release.Release, error) {
	c, err := r.chart(ctx, rel)
	if err != nil {
		return nil, err
	}
	if err := r.c.ensureNamespace(ctx, rel.Namespace, rel.Install.Privileged); err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	r.progress("install %s%s", rel, why)
	hr, err := r.helm.install(ctx, rel, c, vals)
	if hr != nil {
		r.remember(rel, hr)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: helm install: %w", rel, err)
	}
	return hr, nil
}

// upgradeAll moves every release of from to plan in plan's order, as
// kubepkg's operator applies a new revision: the pre-upgrade hooks of a
// package whose version changes first (given kubepkg.fromVersion and
// kubepkg.toVersion) and removed once the upgrade is done; the chart's
// CRDs applied before its release when install.upgradeCRDs says so; a
// release the old version did not have installed; each ready before the
// next.
func (r *run) upgradeAll(ctx context.Context, from, plan *Plan) error {
	installed := map[string]bool{}
	for _, rel := range from.Releases {
		installed[rel.Namespace+"/"+rel.Name] = true
	}
	oldVersion := map[string]string{}
	for _, p := range from.Packages {
		oldVersion[p.Name] = p.Version
	}
	var hooks []Release
	for _, h := range plan.PreUpgrade {
		was, ok := oldVersion[h.Package]
		if !ok || was == h.Version {
			continue
		}
		vals := map[string]any{"kubepkg": map[string]any{"fromVersion": was, "toVersion": h.Version}}
		if err := r.installOne(ctx, h, vals, " (pre-upgrade hook from "+was+")"); err != nil {
			return fmt.Errorf("pre-upgrade hook %s failed: %w", h.Component, err)
		}
		hooks = append(hooks, h)
	}
	for _, rel := range plan.Releases {
		if !installed[rel.Namespace+"/"+rel.Name] {
			if err := r.installOne(ctx, rel, nil, " (new in this version)"); err != nil {
				return err
			}
			continue
		}
		c, err := r.chart(ctx, rel)
		if err != nil {
			return err
		}
		if err := r.applyCRDs(ctx, rel, c); err != nil {
			return err
		}
		r.progress("upgrade %s", rel)
		hr, err := r.helm.upgrade(ctx, rel, c)
		if hr != nil {
			r.remember(rel, hr)
		}
		if err != nil {
			return fmt.Errorf("%s: helm upgrade: %w", rel, err)
		}
		if err := r.ready(ctx, rel, hr); err != nil {
			return err
		}
	}
	for _, h := range hooks {
		r.progress("remove pre-upgrade hook %s", h)
		if _, err := r.helm.uninstall(h); err != nil {
			return fmt.Errorf("%s: removing the pre-upgrade hook: %w", h, err)
		}
	}
	return nil
}

func (r *run) rollbackAll(ctx context.Context, plan, from *Plan) error {
	was := map[string]bool{}
	for _, rel := range from.Releases {
		was[rel.Namespace+"/"+rel.Name] = true
	}
	for i := len(plan.Releases) - 1; i >= 0; i-- {
		rel := plan.Releases[i]
		if !was[rel.Namespace+"/"+rel.Name] {
			continue // new in this version: nothing to roll back to
		}
		r.progress("rollback %s", rel)
		hr, err := r.helm.rollback(rel)
		if hr != nil {
			r.remember(rel, hr)
		}
		if err != nil {
			return fmt.Errorf("%s: helm rollback: %w", rel, err)
		}
		if err := r.ready(ctx, rel, hr); err != nil {
			return err
		}
	}
	return nil
}

// applyCRDs applies the chart's CRDs before an upgrade when
// install.upgradeCRDs is Create or CreateReplace (the two do the same in
// kubepkg's helm backend: a forced server-side apply by field manager
// kubepkg); Skip and "" leave them, since Helm never upgrades crds/.
func (r *run) applyCRDs(ctx context.Context, rel Release, c *chart.Chart) error {
	mode := rel.Install.UpgradeCRDs
	if mode != "Create" && mode != "CreateReplace" {
		return nil
	}
	gvr := apiextv1.SchemeGroupVersion.WithResource("customresourcedefinitions")
	force := true
	for _, f := range c.CRDObjects() {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal(f.File.Data, &u.Object); err != nil {
			return fmt.Errorf("%s: %s: %w", rel, f.Filename, err)
		}
		if u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		data, err := u.MarshalJSON()
		if err != nil {
			return err
		}
		r.logf("%s: apply CRD %s (upgradeCRDs: %s)", rel, u.GetName(), mode)
		if _, err := r.c.dyn.Resource(gvr).Patch(ctx, u.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "kubepkg", Force: &force}); err != nil {
			return fmt.Errorf("%s: apply CRD %s (upgradeCRDs: %s): %w", rel, u.GetName(), mode, err)
		}
	}
	r.c.mapper.Reset()
	return nil
}

// remember records the objects a release revision made.
func (r *run) remember(rel Release, hr *release.Release) {
	key := rel.Namespace + "/" + rel.Name
	objs, err := r.objects(hr.Manifest, rel.Namespace)
	if err != nil {
		r.logf("%s: reading its manifest: %v", rel, err)
	}
	objs = slices.Clone(objs)
	for _, h := range hr.Hooks {
		if slices.Contains(h.Events, release.HookTest) {
			continue
		}
		ho, err := r.objects(h.Manifest, rel.Namespace)
		if err == nil {
			objs = append(objs, ho...)
		}
	}
	for _, o := range objs {
		if !slices.Contains(r.made[key], o) {
			r.made[key] = append(r.made[key], o)
		}
	}
}

// objects returns the objects of a manifest (cluster.objects), read once
// per manifest and namespace; the slice is shared, not to be changed.
func (r *run) objects(manifest, ns string) ([]object, error) {
	key := [2]string{ns, manifest}
	if objs, ok := r.parsed[key]; ok {
		return objs, nil
	}
	objs, err := r.c.objects(manifest, ns)
	if err != nil {
		return nil, err
	}
	r.parsed[key] = objs
	return objs, nil
}

// ready waits for the release's objects and conditions.
func (r *run) ready(ctx context.Context, rel Release, hr *release.Release) error {
	objs, err := r.objects(hr.Manifest, rel.Namespace)
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	r.progress("wait for %s: %d objects", rel, len(objs))
	w := &waiter{c: r.c, deadline: r.q.Timeout, interval: 250 * time.Millisecond, logf: r.logf}
	uids, err := w.wait(ctx, rel, objs)
	if err != nil {
		return err
	}
	for _, uid := range uids {
		r.owners[uid] = true
	}
	return nil
}

// checkDigests fails when a pod of the releases runs an image the index
// does not pin by digest for the plan's packages.
func (r *run) checkDigests(ctx context.Context, plan *Plan) error {
	var pinned, namespaces []string
	for _, p := range plan.Packages {
		pinned = append(pinned, p.Spec.Images...)
	}
	for _, rel := range plan.Releases {
		if !slices.Contains(namespaces, rel.Namespace) {
			namespaces = append(namespaces, rel.Namespace)
		}
	}
	pods, err := r.c.podsOf(ctx, r.owners, namespaces)
	if err != nil {
		return err
	}
	r.res.Pods = r.res.Pods[:0]
	for _, p := range pods {
		rp := RanPod{Namespace: p.Namespace, Name: p.Name, Node: p.Node, Arch: p.Arch, Runtime: p.Runtime}
		for _, im := range p.Images {
			rp.Images = append(rp.Images, im.Image)
		}
		r.res.Pods = append(r.res.Pods, rp)
		r.logf("pod %s/%s on %s (%s, %s): %s", p.Namespace, p.Name, p.Node, p.Arch, p.Runtime, strings.Join(rp.Images, " "))
	}
	if problems := checkImages(pods, pinned); len(problems) > 0 {
		return fmt.Errorf("%d container(s) run what the index does not pin:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	if len(pods) == 0 && len(pinned) > 0 {
		r.logf("no pod of the releases is running; nothing to check against the %d pinned images", len(pinned))
	}
	return r.archOfPods(pods)
}

// uninstallAll removes the releases of the plans, newest first, and fails
// if any object they made is left (but CRDs and objects Helm keeps by
// helm.sh/resource-policy: keep) or a CRD of the packages was removed.
func (r *run) uninstallAll(ctx context.Context, plans ...*Plan) error {
	var errs []error
	done := map[string]bool{}
	var crds []string
	for _, plan := range plans {
		for _, p := range plan.Packages {
			crds = append(crds, p.Spec.CRDs...)
		}
		for i := len(plan.Releases) - 1; i >= 0; i-- {
			rel := plan.Releases[i]
			key := rel.Namespace + "/" + rel.Name
			if done[key] {
				continue
			}
			done[key] = true
			r.progress("uninstall %s", rel)
			resp, err := r.helm.uninstall(rel)
			if errors.Is(err, driver.ErrReleaseNotFound) && r.made[key] == nil {
				r.logf("%s: not installed (the install stopped before it)", rel)
				continue
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: helm uninstall: %w", rel, err))
				continue
			}
			if resp != nil && resp.Info != "" {
				r.logf("%s: %s", rel, strings.TrimSpace(resp.Info))
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	left, err := r.leftovers(ctx, done)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("uninstall left %d object(s) behind (not CRDs, not kept by helm.sh/resource-policy: keep): %s", len(left), orNone(left))
	}
	var gone []string
	for _, name := range crds {
		u, err := r.c.get(ctx, object{GVK: apiextv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), Name: name})
		if err != nil {
			return err
		}
		if u == nil || u.GetDeletionTimestamp() != nil {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		return fmt.Errorf("uninstall removed the CRD(s) %s: a package's CRDs must outlive it, or the custom resources stored in them are lost", orNone(gone))
	}
	r.owners = map[types.UID]bool{}
	return nil
}

// leftovers polls, up to the timeout, until every object the releases
// made is gone; it returns those still there.
func (r *run) leftovers(ctx context.Context, releases map[string]bool) ([]string, error) {
	deadline := time.Now().Add(r.q.Timeout)
	var check []object
	for key := range releases {
		for _, o := range r.made[key] {
			if o.GVK.Kind != "CustomResourceDefinition" && !slices.Contains(check, o) {
				check = append(check, o)
			}
		}
	}
	for {
		live, err := r.c.getAll(ctx, check, readMeta) // annotations, deletion, finalizers
		if err != nil {
			return nil, err
		}
		var left []string
		for _, o := range check {
			u := live[o]
			if u == nil || u.GetAnnotations()["helm.sh/resource-policy"] == "keep" {
				continue
			}
			state := ""
			if u.GetDeletionTimestamp() != nil {
				state = " (being deleted: finalizers " + strings.Join(u.GetFinalizers(), ", ") + ")"
			}
			left = append(left, o.String()+state)
		}
		slices.Sort(left)
		if len(left) == 0 || time.Now().After(deadline) {
			for key := range releases {
				delete(r.made, key)
			}
			return left, nil
		}
		select {
		case <-ctx.Done():
			return left, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
