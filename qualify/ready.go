package qualify

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"kbuild.dev/kbuild/spec"
)

// NotReadyError is a release whose objects did not become ready: the
// object, the check and what it last saw.
type NotReadyError struct {
	Release  Release
	Object   string
	Check    string // "kstatus", "healthCheckExprs", "readyWhen Available=True"
	Last     string // the last observed value
	Failed   bool   // the check said Failed (not a timeout)
	Deadline time.Duration
}

func (e *NotReadyError) Error() string {
	if e.Failed {
		return fmt.Sprintf("%s: %s failed (%s): %s", e.Release, e.Object, e.Check, e.Last)
	}
	return fmt.Sprintf("%s: %s not ready within %s (%s); last observed: %s", e.Release, e.Object, e.Deadline, e.Check, e.Last)
}

// waiter decides when a release is ready: every object it made Current
// by kstatus (sigs.k8s.io/cli-utils, as Helm 4's --wait and Flux decide),
// or by the component's healthCheckExprs for the kinds they name, and
// every readyWhen condition met. Each object has its own deadline.
type waiter struct {
	c        *cluster
	deadline time.Duration
	interval time.Duration
	logf     func(format string, args ...any)
}

type pendingCheck struct {
	obj   object
	check string
	eval  func(u *unstructured.Unstructured) (done bool, failed bool, last string)
	last  string
	// made is set for the release's own objects (not readyWhen's).
	made bool
}

// wait returns once every check holds, with the UIDs of the release's
// objects as they were when found ready (the objects the digests check
// follows pods up to), so that nothing is read again to learn them.
func (w *waiter) wait(ctx context.Context, r Release, objs []object) ([]types.UID, error) {
	health, err := compileHealth(r.Install.HealthCheckExprs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r, err)
	}
	var pending []*pendingCheck
	for _, o := range objs {
		if h := health.forKind(o.GVK); h != nil {
			pending = append(pending, &pendingCheck{obj: o, check: "healthCheckExprs", eval: h.eval, made: true})
			continue
		}
		pending = append(pending, &pendingCheck{obj: o, check: "kstatus", eval: kstatusEval, made: true})
	}
	for _, rw := range r.Install.ReadyWhen {
		gv, err := schema.ParseGroupVersion(rw.APIVersion)
		if err != nil {
			return nil, fmt.Errorf("%s: readyWhen apiVersion %q: %w", r, rw.APIVersion, err)
		}
		ns := rw.Namespace
		if ns == "" {
			ns = r.Namespace
		}
		o := object{GVK: gv.WithKind(rw.Kind), Namespace: ns, Name: rw.Name}
		if m, err := w.c.mapping(o.GVK); err == nil && m.Scope.Name() != "namespace" {
			o.Namespace = ""
		}
		pending = append(pending, &pendingCheck{obj: o, check: "readyWhen " + rw.Condition + "=" + want(rw), eval: readyWhenEval(rw)})
	}
	start := time.Now()
	var uids []types.UID
	for {
		var still []*pendingCheck
		live, err := w.read(ctx, pending)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r, err)
		}
		for _, p := range pending {
			u := live[p.obj]
			if u == nil {
				p.last = "the object does not exist"
				still = append(still, p)
				continue
			}
			done, failed, last := p.eval(u)
			p.last = last
			if failed {
				return nil, &NotReadyError{Release: r, Object: p.obj.String(), Check: p.check, Last: last, Failed: true}
			}
			if !done {
				still = append(still, p)
			} else if p.made {
				uids = append(uids, u.GetUID())
			}
		}
		pending = still
		if len(pending) == 0 {
			return uids, nil
		}
		if time.Since(start) > w.deadline {
			p := pending[0]
			return nil, &NotReadyError{Release: r, Object: p.obj.String(), Check: p.check, Last: p.last, Deadline: w.deadline}
		}
		select {
		case <-ctx.Done():
			p := pending[0]
			return nil, fmt.Errorf("%s: waiting for %s (%s, last observed: %s): %w", r, p.obj, p.check, p.last, ctx.Err())
		case <-time.After(w.interval):
		}
	}
}

// read reads the live objects of the pending checks (readsOf says how).
func (w *waiter) read(ctx context.Context, pending []*pendingCheck) (map[object]*unstructured.Unstructured, error) {
	whole, typed, meta := readsOf(pending)
	live := map[object]*unstructured.Unstructured{}
	for _, s := range []struct {
		objs []object
		how  read
	}{{whole, readWhole}, {typed, readTyped}, {meta, readMeta}} {
		if len(s.objs) == 0 {
			continue
		}
		got, err := w.c.getAll(ctx, s.objs, s.how)
		if err != nil {
			return nil, err
		}
		maps.Copy(live, got)
	}
	return live, nil
}

// readsOf splits the objects of the pending checks by what their checks
// need read (cluster.getAll): whole when healthCheckExprs or a readyWhen
// condition reads the object (any field may be named); when kstatus alone
// decides it, its metadata only for a status-less kind, else typed — or
// whole when others of its kind and namespace are, read with them in one
// list.
func readsOf(pending []*pendingCheck) (whole, typed, meta []object) {
	for _, p := range pending {
		if p.check != "kstatus" && !slices.Contains(whole, p.obj) {
			whole = append(whole, p.obj)
		}
	}
	sameList := func(o object) bool {
		return slices.ContainsFunc(whole, func(w object) bool { return w.GVK == o.GVK && w.Namespace == o.Namespace })
	}
	for _, p := range pending {
		switch {
		case slices.Contains(whole, p.obj), slices.Contains(typed, p.obj), slices.Contains(meta, p.obj):
		case statusless[p.obj.GVK.GroupKind()]:
			meta = append(meta, p.obj)
		case sameList(p.obj):
			whole = append(whole, p.obj)
		default:
			typed = append(typed, p.obj)
		}
	}
	return whole, typed, meta
}

// statusless are the built-in kinds that have neither spec nor status:
// kstatus computes them from their metadata alone (being deleted or not,
// the generic rules on status.observedGeneration and status.conditions
// find nothing, no kind-specific rule), so the waiter reads only their
// metadata (a Secret's data, a ConfigMap's, is never sent).
var statusless = map[schema.GroupKind]bool{
	{Kind: "ConfigMap"}:      true,
	{Kind: "Secret"}:         true,
	{Kind: "ServiceAccount"}: true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               true,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
}

func kstatusEval(u *unstructured.Unstructured) (bool, bool, string) {
	res, err := status.Compute(u)
	if err != nil {
		return false, false, "kstatus: " + err.Error()
	}
	last := string(res.Status)
	if res.Message != "" {
		last += ": " + res.Message
	}
	return res.Status == status.CurrentStatus, res.Status == status.FailedStatus, last
}

func want(rw spec.ReadyWhen) string {
	if rw.Status == "" {
		return "True"
	}
	return rw.Status
}

func readyWhenEval(rw spec.ReadyWhen) func(u *unstructured.Unstructured) (bool, bool, string) {
	return func(u *unstructured.Unstructured) (bool, bool, string) {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		var seen []string
		for _, c := range conds {
			m, ok := c.(map[string]any)
			if !ok {
				continue
			}
			t, _ := m["type"].(string)
			s, _ := m["status"].(string)
			if t == rw.Condition {
				msg, _ := m["message"].(string)
				last := fmt.Sprintf("%s=%s", t, s)
				if msg != "" {
					last += " (" + msg + ")"
				}
				return strings.EqualFold(s, want(rw)), false, last
			}
			seen = append(seen, t+"="+s)
		}
		if len(seen) == 0 {
			return false, false, "no conditions"
		}
		return false, false, "no condition " + rw.Condition + " (has " + strings.Join(seen, ", ") + ")"
	}
}
