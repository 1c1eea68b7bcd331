package qualify

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// Typed reads: the built-in kinds (those client-go's scheme knows, with
// their lists) read in protobuf into their Go types, managedFields
// dropped, and converted to the unstructured objects kstatus computes
// from. Against the same object read as JSON into maps (what the
// dynamic client does) this is the same object without managedFields, for
// a third of the CPU: the waiter polls these lists every 250 ms.
//
// A server newer than these types may send fields they do not know; the
// protobuf decoding drops them. kstatus reads only fields every version
// has (spec.replicas, status, conditions, generations), so the waiter
// reads typed only what kstatus alone decides; what healthCheckExprs or a
// readyWhen condition reads is read whole.

// typedKind reports whether gvk and its list are types client-go's scheme
// knows (the built-in kinds).
func typedKind(gvk schema.GroupVersionKind) bool {
	return scheme.Scheme.Recognizes(gvk) && scheme.Scheme.Recognizes(gvk.GroupVersion().WithKind(gvk.Kind+"List"))
}

// typedClient returns a REST client of the group version speaking
// protobuf into client-go's types, over the cluster's shared transport;
// one per group version.
func (c *cluster) typedClient(gv schema.GroupVersion) (rest.Interface, error) {
	c.typedMu.Lock()
	defer c.typedMu.Unlock()
	if rc, ok := c.typed[gv]; ok {
		return rc, nil
	}
	cfg := rest.CopyConfig(c.shared)
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", gv, err)
	}
	if c.typed == nil {
		c.typed = map[schema.GroupVersion]rest.Interface{}
	}
	c.typed[gv] = rc
	return rc, nil
}

// listTyped lists the objects of gvk (resource gvr) in ns ("" for all or
// cluster-scoped) typed, as unstructured objects without managedFields.
func (c *cluster) listTyped(ctx context.Context, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, ns string) (*unstructured.UnstructuredList, error) {
	rc, err := c.typedClient(gvr.GroupVersion())
	if err != nil {
		return nil, err
	}
	list, err := scheme.Scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil, err
	}
	if err := rc.Get().NamespaceIfScoped(ns, ns != "").Resource(gvr.Resource).Do(ctx).Into(list); err != nil {
		return nil, err
	}
	out := &unstructured.UnstructuredList{}
	err = meta.EachListItem(list, func(obj runtime.Object) error {
		u, err := typedToUnstructured(obj, gvk)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, *u)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// getTyped reads one object of a typed kind; a missing one is (nil, nil).
func (c *cluster) getTyped(ctx context.Context, gvr schema.GroupVersionResource, o object) (*unstructured.Unstructured, error) {
	rc, err := c.typedClient(gvr.GroupVersion())
	if err != nil {
		return nil, err
	}
	obj, err := scheme.Scheme.New(o.GVK)
	if err != nil {
		return nil, err
	}
	err = rc.Get().NamespaceIfScoped(o.Namespace, o.Namespace != "").Resource(gvr.Resource).Name(o.Name).Do(ctx).Into(obj)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return typedToUnstructured(obj, o.GVK)
}

// typedToUnstructured converts a typed object to the unstructured object
// of kind gvk a JSON read gives, without its managedFields.
func typedToUnstructured(obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	mo, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%s: %T has no metadata", gvk, obj)
	}
	mo.SetManagedFields(nil)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", gvk.Kind, mo.GetNamespace(), mo.GetName(), err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
