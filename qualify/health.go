package qualify

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kbuild.dev/kbuild/spec"
)

// healthChecks are a component's healthCheckExprs, compiled: CEL
// expressions (github.com/google/cel-go) over an object of one apiVersion
// and kind, which replace kstatus for that kind. As Flux's and kubepkg's
// operators evaluate them, the object's top-level fields are the
// variables (apiVersion, kind, metadata, spec, status, and any other), and
// the expressions are tried in the order failed, current, inProgress; when
// none is true the object is in progress.
type healthChecks []*healthCheck

type healthCheck struct {
	gvk                       schema.GroupVersionKind
	src                       spec.HealthCheck
	failed, current, progress cel.Program
}

// celVariables are declared for every expression; an object that lacks
// one (no status yet) evaluates with it as an empty map.
var celVariables = []string{"apiVersion", "kind", "metadata", "spec", "status", "data", "stringData", "type", "rules", "subsets"}

func compileHealth(list []spec.HealthCheck) (healthChecks, error) {
	var opts []cel.EnvOption
	for _, v := range celVariables {
		opts = append(opts, cel.Variable(v, cel.DynType))
	}
	env, err := cel.NewEnv(opts...)
	if err != nil {
		return nil, err
	}
	var out healthChecks
	for i, h := range list {
		gv, err := schema.ParseGroupVersion(h.APIVersion)
		if err != nil || h.Kind == "" {
			return nil, fmt.Errorf("healthCheckExprs[%d]: apiVersion %q kind %q: want both", i, h.APIVersion, h.Kind)
		}
		if h.Current == "" {
			return nil, fmt.Errorf("healthCheckExprs[%d] (%s %s): current is required", i, h.APIVersion, h.Kind)
		}
		hc := &healthCheck{gvk: gv.WithKind(h.Kind), src: h}
		for _, e := range []struct {
			field, expr string
			prog        *cel.Program
		}{{"failed", h.Failed, &hc.failed}, {"current", h.Current, &hc.current}, {"inProgress", h.InProgress, &hc.progress}} {
			if e.expr == "" {
				continue
			}
			ast, iss := env.Compile(e.expr)
			if iss.Err() != nil {
				return nil, fmt.Errorf("healthCheckExprs[%d] (%s %s) %s %q: %w", i, h.APIVersion, h.Kind, e.field, e.expr, iss.Err())
			}
			if !ast.OutputType().IsExactType(types.BoolType) && !ast.OutputType().IsExactType(types.DynType) {
				return nil, fmt.Errorf("healthCheckExprs[%d] (%s %s) %s %q: gives %s, want a bool", i, h.APIVersion, h.Kind, e.field, e.expr, ast.OutputType())
			}
			p, err := env.Program(ast, cel.CostLimit(1_000_000))
			if err != nil {
				return nil, fmt.Errorf("healthCheckExprs[%d] %s: %w", i, e.field, err)
			}
			*e.prog = p
		}
		out = append(out, hc)
	}
	return out, nil
}

func (hs healthChecks) forKind(gvk schema.GroupVersionKind) *healthCheck {
	i := slices.IndexFunc(hs, func(h *healthCheck) bool { return h.gvk == gvk })
	if i < 0 {
		return nil
	}
	return hs[i]
}

// eval runs the expressions on u, as healthChecks says.
func (h *healthCheck) eval(u *unstructured.Unstructured) (done, failed bool, last string) {
	if og, ok, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); ok && og != u.GetGeneration() {
		return false, false, fmt.Sprintf("status.observedGeneration %d, metadata.generation %d: the controller has not seen the newest spec", og, u.GetGeneration())
	}
	vars := map[string]any{}
	for _, v := range celVariables {
		vars[v] = map[string]any{}
	}
	keys := make([]string, 0, len(u.Object))
	for k := range u.Object {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vars[k] = u.Object[k]
	}
	run := func(p cel.Program) (bool, string) {
		if p == nil {
			return false, ""
		}
		out, _, err := p.Eval(vars)
		if err != nil {
			return false, err.Error()
		}
		b, ok := out.Value().(bool)
		return ok && b, ""
	}
	var errs []string
	for _, e := range []struct {
		p          cel.Program
		field, src string
	}{{h.progress, "inProgress", h.src.InProgress}, {h.failed, "failed", h.src.Failed}, {h.current, "current", h.src.Current}} {
		ok, why := run(e.p)
		if why != "" {
			errs = append(errs, fmt.Sprintf("%s expression %q: %s", e.field, e.src, why))
			continue
		}
		if !ok {
			continue
		}
		switch e.field {
		case "inProgress":
			return false, false, fmt.Sprintf("inProgress expression %q is true", e.src)
		case "failed":
			return false, true, fmt.Sprintf("failed expression %q is true", e.src)
		default:
			return true, false, fmt.Sprintf("current expression %q is true", e.src)
		}
	}
	if len(errs) > 0 {
		return false, false, strings.Join(errs, "; ")
	}
	return false, false, fmt.Sprintf("no expression is true (current: %q)", h.src.Current)
}
