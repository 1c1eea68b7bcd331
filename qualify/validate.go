package qualify

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	mu sync.Mutex
	ok map[schema.GroupVersionKind]bool
}

func (k *fieldValidationKinds) has(gvk schema.GroupVersionKind) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ok[gvk]
}

func (k *fieldValidationKinds) add(gvk schema.GroupVersionKind) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ok == nil {
		k.ok = map[schema.GroupVersionKind]bool{}
	}
	k.ok[gvk] = true
}

// Validator returns a schema that skips the kinds known to be validated by
// the server.
func (f validatingFactory) Validator(directive string) (validation.Schema, error) {
	if directive == metav1.FieldValidationIgnore {
		return f.Factory.Validator(directive)
	}
	return &kindSchema{f: f, directive: directive}, nil
}

// kindSchema is one Build's schema: a verifier made on the first kind not
// yet known, kubectl's Validator on the first the server does not
// validate.
type kindSchema struct {
	f         validatingFactory
	directive string
	verifier  resource.Verifier
	inner     validation.Schema
}

func (s *kindSchema) ValidateBytes(data []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err == nil && tm.Kind != "" && tm.APIVersion != "" {
		gvk := tm.GroupVersionKind()
		if s.f.kinds.has(gvk) {
			return nil
		}
		if s.verifier == nil {
			s.verifier = s.f.newVerifier()
		}
		if s.verifier != nil && s.verifier.HasSupport(gvk) == nil {
			s.f.kinds.add(gvk)
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

// newVerifier is kubectl's field validation verifier (OpenAPI v3, cached
// in memory for this Build); nil when the factory cannot make one.
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
