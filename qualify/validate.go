package qualify

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi/cached"
	"k8s.io/kubectl/pkg/validation"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v3/pkg/kube"
)

// validatingFactory is Helm's client factory with a Validator that
// remembers, for the whole qualification, the kinds whose API accepts
// server-side field validation. kubectl's Validator, which Helm calls for
// every manifest it builds, makes a fresh verifier each time and so parses
// the API's OpenAPI v3 document of each group again: on the Foreman stack
// that was half of kbuild's CPU. The verdict is the same: a kind the
// server validates is not validated client-side (as kubectl's
// paramVerifyingSchema decides); any other kind goes to kubectl's own
// Validator.
type validatingFactory struct {
	kube.Factory
	kinds *fieldValidationKinds
}

// fieldValidationKinds are the kinds known to support server-side field
// validation; one set serves every namespace's Helm configuration.
type fieldValidationKinds struct {
	// all is set when the server is Kubernetes 1.27 or later, where
	// server-side field validation is GA for every kind and endpoint:
	// nothing needs asking.
	all bool
	mu  sync.Mutex
	ok  map[schema.GroupVersionKind]bool
	// verifier is kept while it knows every kind asked, remade on the
	// first it does not (a CRD created since it read the OpenAPI
	// document).
	verifier resource.Verifier
}

// supported asks the server whether gvk supports field validation, with
// the shared verifier, then with a fresh one.
func (k *fieldValidationKinds) supported(f validatingFactory, gvk schema.GroupVersionKind) bool {
	if k.has(gvk) {
		return true
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for fresh := false; ; fresh = true {
		if k.verifier == nil || fresh {
			if k.verifier = f.newVerifier(); k.verifier == nil {
				return false
			}
		}
		if k.verifier.HasSupport(gvk) == nil {
			if k.ok == nil {
				k.ok = map[schema.GroupVersionKind]bool{}
			}
			k.ok[gvk] = true
			return true
		}
		if fresh {
			return false
		}
	}
}

func (k *fieldValidationKinds) has(gvk schema.GroupVersionKind) bool {
	if k.all {
		return true
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ok[gvk]
}

// Validator returns a schema that skips the kinds known to be validated by
// the server.
func (f validatingFactory) Validator(directive string) (validation.Schema, error) {
	if directive == metav1.FieldValidationIgnore {
		return f.Factory.Validator(directive)
	}
	return &kindSchema{f: f, directive: directive}, nil
}

// kindSchema is one Build's schema: kubectl's Validator made on the
// first kind the server does not validate.
type kindSchema struct {
	f         validatingFactory
	directive string
	inner     validation.Schema
}

func (s *kindSchema) ValidateBytes(data []byte) error {
	if s.f.kinds.all {
		return nil
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err == nil && tm.Kind != "" && tm.APIVersion != "" {
		if s.f.kinds.supported(s.f, tm.GroupVersionKind()) {
			return nil
		}
	}
	if s.inner == nil {
		inner, err := s.f.Factory.Validator(s.directive)
		if err != nil {
			return err
		}
		s.inner = inner
	}
	return s.inner.ValidateBytes(data)
}

// newVerifier is kubectl's field validation verifier (its OpenAPI v3
// documents cached in memory); nil when the factory cannot make one.
func (f validatingFactory) newVerifier() resource.Verifier {
	dg, ok := f.Factory.(interface {
		ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error)
	})
	if !ok {
		return nil
	}
	dc, err := dg.ToDiscoveryClient()
	if err != nil {
		return nil
	}
	dyn, err := f.DynamicClient()
	if err != nil {
		return nil
	}
	return resource.NewQueryParamVerifierV3(dyn, cached.NewClient(dc.OpenAPIV3()), resource.QueryParamFieldValidation)
}

// validatesFields reports whether a server of version v (GitVersion)
// validates fields itself for every kind: ServerSideFieldValidation is GA
// since Kubernetes 1.27.
func validatesFields(v string) bool {
	sv, err := utilversion.ParseGeneric(v)
	return err == nil && sv.AtLeast(utilversion.MajorMinor(1, 27))
}
