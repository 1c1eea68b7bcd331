package qualify

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
)

// builtManifests is Helm's kube client with Build remembered per manifest
// text. Build parses a release manifest (YAML to JSON to objects) and
// maps each object's kind to its resource; a qualification builds the
// same manifests again and again (an upgrade builds the revision it
// replaces, a rollback both revisions, hooks at every action), and the
// parsing was a tenth of kbuild's CPU. What Build returns depends on the
// text, the validation asked for and the REST mapper: a remembered result
// is given again only while the mapper still maps every kind of it to the
// same resource (a CRD changed or removed since is built anew, failing as
// Helm's own Build would), and always as a copy (Helm changes the objects
// it is given: labels, the server's answers). Errors are not remembered.
// Every other method is Helm's client's own.
type builtManifests struct {
	*kube.Client
	mapper meta.RESTMapper
	// build is Helm's Build (a field for the tests).
	build func(r io.Reader, validate bool) (kube.ResourceList, error)

	mu    sync.Mutex
	built map[builtKey]kube.ResourceList
}

type builtKey struct {
	manifest string
	validate bool
}

func newBuiltManifests(c *kube.Client, mapper meta.RESTMapper) *builtManifests {
	return &builtManifests{Client: c, mapper: mapper, build: c.Build}
}

// Build returns what Helm's Build returns for the manifest read from r.
func (b *builtManifests) Build(r io.Reader, validate bool) (kube.ResourceList, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading the manifest: %w", err)
	}
	key := builtKey{manifest: string(data), validate: validate}
	b.mu.Lock()
	list, ok := b.built[key]
	b.mu.Unlock()
	if ok && b.mapped(list) {
		return copyInfos(list), nil
	}
	list, err = b.build(bytes.NewReader(data), validate)
	if err != nil {
		return list, err
	}
	b.mu.Lock()
	if b.built == nil {
		b.built = map[builtKey]kube.ResourceList{}
	}
	b.built[key] = copyInfos(list)
	b.mu.Unlock()
	return list, nil
}

// mapped reports whether the mapper maps every object's kind to the
// resource and scope it was built with.
func (b *builtManifests) mapped(list kube.ResourceList) bool {
	for _, info := range list {
		if info.Mapping == nil {
			return false
		}
		gvk := info.Mapping.GroupVersionKind
		m, err := b.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil || m.Resource != info.Mapping.Resource || m.Scope.Name() != info.Mapping.Scope.Name() {
			return false
		}
	}
	return true
}

// copyInfos copies the infos, each object deep.
func copyInfos(list kube.ResourceList) kube.ResourceList {
	out := make(kube.ResourceList, len(list))
	for i, info := range list {
		c := *info
		if info.Object != nil {
			c.Object = info.Object.DeepCopyObject()
		}
		out[i] = &c
	}
	return out
}
