package render

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// DefaultKubeVersion is the Kubernetes version charts are rendered against
// when neither the chart's kubeVersion nor the caller asks for another: the
// release of the Kubernetes API modules (k8s.io/api v0.37) kbuild is built
// with, whose built-in API groups make up the API set (see APIVersions). Helm's own
// default, v1.20, would check every chart in the branch it keeps for old
// clusters.
const DefaultKubeVersion = "v1.37.0"

// oldestKubeMinor is the oldest Kubernetes 1.x minor release KubeVersionFor
// falls back to for a chart whose kubeVersion excludes the default.
const oldestKubeMinor = 16

// APIVersions returns the API set a cluster of Kubernetes version kube
// (such as "v1.37.0") serves, as charts see it in .Capabilities.APIVersions:
// every group/version and group/version/Kind built into the Kubernetes API
// modules kbuild is built with, without the List and option types and
// without the beta versions removed by that release (apps/v1beta1 is gone
// from 1.16 on, policy/v1beta1 from 1.25), sorted. A cluster's discovery
// reports kinds the same way; "helm template" alone knows only the
// group/versions, removed ones included, so charts asking for
// "policy/v1/PodDisruptionBudget" take their fallback branch there.
//
// The set of each version is computed once (walking the scheme takes about
// as long as rendering a small template) and each call returns a copy.
func APIVersions(kube string) []string {
	if v, ok := apiVersionSets.Load(kube); ok {
		return slices.Clone(v.([]string))
	}
	v := apiVersions(kube)
	apiVersionSets.Store(kube, v)
	return slices.Clone(v)
}

// apiVersionSets memoizes apiVersions by Kubernetes version.
var apiVersionSets sync.Map

func apiVersions(kube string) []string {
	minor := 0
	if kv, err := chartutil.ParseKubeVersion(kube); err == nil {
		minor, _ = strconv.Atoi(strings.TrimRight(kv.Minor, "+"))
	}
	var v []string
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || strings.HasSuffix(gvk.Kind, "List") || strings.HasSuffix(gvk.Kind, "Options") || typ.PkgPath() == metaPkg {
			continue
		}
		obj := reflect.New(typ).Interface()
		if l, ok := obj.(interface{ APILifecycleRemoved() (int, int) }); ok {
			if major, m := l.APILifecycleRemoved(); major == 1 && m <= minor {
				continue
			}
		}
		if l, ok := obj.(interface{ APILifecycleIntroduced() (int, int) }); ok {
			if major, m := l.APILifecycleIntroduced(); major == 1 && m > minor {
				continue
			}
		}
		v = append(v, gvk.GroupVersion().String(), gvk.GroupVersion().String()+"/"+gvk.Kind)
	}
	slices.Sort(v)
	return slices.Compact(v)
}

// metaPkg holds the option and status types every group registers.
var metaPkg = reflect.TypeFor[metav1.Status]().PkgPath()

// KubeVersionFor returns the Kubernetes version to render chart md against.
// With requested set (from --kube-version) it is that version, refused when
// the chart's kubeVersion excludes it, as helm install would. Otherwise it is
// DefaultKubeVersion, or, when the chart's kubeVersion excludes that, the
// newest v1.MINOR.0 down to v1.16.0 the constraint allows.
func KubeVersionFor(md *chart.Metadata, requested string) (*chartutil.KubeVersion, error) {
	constraint := ""
	name := ""
	if md != nil {
		constraint, name = md.KubeVersion, md.Name
	}
	if requested != "" {
		sv, err := semver.NewVersion(requested)
		if err != nil || sv.Major() != 1 || sv.Prerelease() != "" {
			return nil, fmt.Errorf("kube version %q: not a Kubernetes release; give a version such as 1.31 or v1.31.2", requested)
		}
		kv, err := chartutil.ParseKubeVersion(fmt.Sprintf("v%d.%d.%d", sv.Major(), sv.Minor(), sv.Patch()))
		if err != nil {
			return nil, err
		}
		if constraint != "" && !chartutil.IsCompatibleRange(constraint, kv.Version) {
			return nil, &KubeVersionError{Chart: name, Constraint: constraint, Requested: kv.Version}
		}
		return kv, nil
	}
	if constraint == "" || chartutil.IsCompatibleRange(constraint, DefaultKubeVersion) {
		return chartutil.ParseKubeVersion(DefaultKubeVersion)
	}
	def, err := chartutil.ParseKubeVersion(DefaultKubeVersion)
	if err != nil {
		return nil, err
	}
	newest, _ := strconv.Atoi(def.Minor)
	for m := newest - 1; m >= oldestKubeMinor; m-- {
		v := fmt.Sprintf("v1.%d.0", m)
		if chartutil.IsCompatibleRange(constraint, v) {
			return chartutil.ParseKubeVersion(v)
		}
	}
	return nil, &KubeVersionError{Chart: name, Constraint: constraint}
}

// KubeVersionError is the error of KubeVersionFor about a chart whose
// kubeVersion excludes the Kubernetes version asked for (Requested) or,
// when none was, every release from v1.16.0 to DefaultKubeVersion; a
// command line says how to ask for another.
type KubeVersionError struct {
	// Chart is the chart's name and Constraint its kubeVersion.
	Chart, Constraint string
	// Requested is the version asked for (v1.MINOR.PATCH), or "".
	Requested string
}

func (e *KubeVersionError) Error() string {
	if e.Requested != "" {
		return fmt.Sprintf("chart %s requires kubeVersion %q, which Kubernetes %s does not satisfy", e.Chart, e.Constraint, e.Requested)
	}
	return fmt.Sprintf("chart %s requires kubeVersion %q, which no Kubernetes release from v1.%d.0 to %s satisfies", e.Chart, e.Constraint, oldestKubeMinor, DefaultKubeVersion)
}
