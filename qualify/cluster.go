package qualify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"sync"
	"syscall"

	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// cluster is the API server a qualification runs against.
type cluster struct {
	config *rest.Config
	// shared is config over one transport, for Helm's clients (getter.go).
	shared *rest.Config
	cs     kubernetes.Interface
	dyn    dynamic.Interface
	// meta reads objects' metadata only (protobuf, no spec, status or
	// data): what leftovers and status-less kinds need (getAll).
	meta   metadata.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	// discovery is the in-memory discovery cache under mapper.
	discovery discovery.CachedDiscoveryInterface
	// typed are the protobuf clients of getAll's typed reads, by group
	// version (typed.go).
	typedMu sync.Mutex
	typed   map[schema.GroupVersion]rest.Interface
}

func connect(kubeconfig, kubecontext string) (*cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubecontext}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	// Built-in kinds in protobuf, as the control plane's own components
	// speak: Helm's release records are Secrets whose data JSON would
	// carry base64 of their base64, encoded, sent and decoded again on
	// every history read. The dynamic and unstructured clients (what
	// readiness and Helm's manifests use) speak JSON whatever this says.
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	shared, err := sharedTransport(cfg)
	if err != nil {
		return nil, err
	}
	mdc := memory.NewMemCacheClient(dc)
	return &cluster{config: cfg, shared: shared, cs: cs, dyn: dyn, meta: md, discovery: mdc, mapper: restmapper.NewDeferredDiscoveryRESTMapper(mdc)}, nil
}

// object is one object a release made.
type object struct {
	GVK       schema.GroupVersionKind
	Namespace string // "" for cluster-scoped objects
	Name      string
}

func (o object) String() string {
	kind := o.GVK.Kind
	if o.Namespace == "" {
		return kind + " " + o.Name
	}
	return kind + " " + o.Namespace + "/" + o.Name
}

// objects returns the objects of a release manifest, namespaced ones
// without a namespace put in ns (as Helm puts them).
func (c *cluster) objects(manifest, ns string) ([]object, error) {
	var out []object
	parts := releaseutil.SplitManifests(manifest)
	keys := make([]string, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	for _, k := range keys {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(parts[k]), &u.Object); err != nil {
			return nil, fmt.Errorf("release manifest: %w", err)
		}
		if len(u.Object) == 0 || u.GetKind() == "" {
			continue
		}
		o, err := c.objectOf(&u, ns)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func (c *cluster) objectOf(u *unstructured.Unstructured, ns string) (object, error) {
	o := object{GVK: u.GroupVersionKind(), Name: u.GetName(), Namespace: u.GetNamespace()}
	m, err := c.mapping(o.GVK)
	if err != nil {
		return o, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if o.Namespace == "" {
			o.Namespace = ns
		}
	} else {
		o.Namespace = ""
	}
	return o, nil
}

func (c *cluster) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && meta.IsNoMatchError(err) {
		c.mapper.Reset() // a CRD the release just made
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gvk, err)
	}
	return m, nil
}

// get reads the live object; a missing one is (nil, nil).
func (c *cluster) get(ctx context.Context, o object) (*unstructured.Unstructured, error) {
	m, err := c.mapping(o.GVK)
	if err != nil {
		return nil, err
	}
	var ri dynamic.ResourceInterface = c.dyn.Resource(m.Resource)
	if o.Namespace != "" {
		ri = c.dyn.Resource(m.Resource).Namespace(o.Namespace)
	}
	u, err := ri.Get(ctx, o.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// read is what getAll reads of an object.
type read int

const (
	// readWhole reads the whole object, as JSON into maps: every field
	// the server sends.
	readWhole read = iota
	// readTyped reads the built-in kinds typed, in protobuf, without
	// managedFields (typed.go); other kinds whole. For what kstatus alone
	// decides: fields the client's types do not know are dropped.
	readTyped
	// readMeta reads the metadata only (the metadata client: the
	// apiVersion and kind of the object, its metadata, nothing else).
	readMeta
)

// getAll reads the live objects of objs, a missing one absent from the
// map: the objects of one resource and namespace with one list when
// there are several of them (a readiness poll of a release reads a
// request per kind, not per object), one by one otherwise, and one by one
// for Secrets read whole or typed (a namespace's list holds Helm's release
// records, far larger than the objects asked for) or when the list is
// refused. A list is read from etcd as a get is (no resourceVersion: the
// newest).
//
// With readMeta, Secrets are listed as any kind, their data never sent.
func (c *cluster) getAll(ctx context.Context, objs []object, how read) (map[object]*unstructured.Unstructured, error) {
	type group struct {
		gvr   schema.GroupVersionResource
		gvk   schema.GroupVersionKind
		ns    string
		objs  []object
		typed bool
	}
	var groups []*group
	byKey := map[[2]string]*group{}
	for _, o := range objs {
		m, err := c.mapping(o.GVK)
		if err != nil {
			return nil, err
		}
		key := [2]string{m.Resource.String(), o.Namespace}
		g := byKey[key]
		if g == nil {
			g = &group{gvr: m.Resource, gvk: o.GVK, ns: o.Namespace, typed: how == readTyped && typedKind(o.GVK)}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.objs = append(g.objs, o)
	}
	metaOnly := how == readMeta
	out := make(map[object]*unstructured.Unstructured, len(objs))
	for _, g := range groups {
		if len(g.objs) > 1 && (metaOnly || g.gvr != corev1.SchemeGroupVersion.WithResource("secrets")) {
			var list *unstructured.UnstructuredList
			var err error
			if g.typed {
				list, err = c.listTyped(ctx, g.gvr, g.gvk, g.ns)
			} else {
				list, err = c.list(ctx, g.gvr, g.ns, metaOnly)
			}
			if err == nil {
				names := make(map[string]*unstructured.Unstructured, len(list.Items))
				for i := range list.Items {
					names[list.Items[i].GetName()] = &list.Items[i]
				}
				for _, o := range g.objs {
					if u := names[o.Name]; u != nil {
						if metaOnly {
							u.SetGroupVersionKind(o.GVK)
						}
						out[o] = u
					}
				}
				continue
			}
			if !apierrors.IsForbidden(err) && !apierrors.IsMethodNotSupported(err) {
				where := ""
				if g.ns != "" {
					where = " in namespace " + g.ns
				}
				return nil, fmt.Errorf("list %s%s: %w", g.gvr.GroupResource(), where, err)
			}
		}
		for _, o := range g.objs {
			var u *unstructured.Unstructured
			var err error
			switch {
			case metaOnly:
				u, err = c.getMeta(ctx, o)
			case g.typed:
				u, err = c.getTyped(ctx, g.gvr, o)
			default:
				u, err = c.get(ctx, o)
			}
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", o, err)
			}
			if u != nil {
				out[o] = u
			}
		}
	}
	return out, nil
}

// list lists a resource in a namespace ("" for all or cluster-scoped),
// whole or metadata only.
func (c *cluster) list(ctx context.Context, gvr schema.GroupVersionResource, ns string, metaOnly bool) (*unstructured.UnstructuredList, error) {
	if !metaOnly {
		var ri dynamic.ResourceInterface = c.dyn.Resource(gvr)
		if ns != "" {
			ri = c.dyn.Resource(gvr).Namespace(ns)
		}
		return ri.List(ctx, metav1.ListOptions{})
	}
	var ri metadata.ResourceInterface = c.meta.Resource(gvr)
	if ns != "" {
		ri = c.meta.Resource(gvr).Namespace(ns)
	}
	pl, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := &unstructured.UnstructuredList{Items: make([]unstructured.Unstructured, len(pl.Items))}
	for i := range pl.Items {
		if out.Items[i].Object, err = metaObject(&pl.Items[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// getMeta reads the live object's metadata; a missing one is (nil, nil).
func (c *cluster) getMeta(ctx context.Context, o object) (*unstructured.Unstructured, error) {
	mapping, err := c.mapping(o.GVK)
	if err != nil {
		return nil, err
	}
	var ri metadata.ResourceInterface = c.meta.Resource(mapping.Resource)
	if o.Namespace != "" {
		ri = c.meta.Resource(mapping.Resource).Namespace(o.Namespace)
	}
	p, err := ri.Get(ctx, o.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := metaObject(p)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(o.GVK)
	return u, nil
}

// metaObject is p as an unstructured object of its own apiVersion and
// kind (the metadata client answers PartialObjectMetadata).
func metaObject(p *metav1.PartialObjectMetadata) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&p.ObjectMeta)
	if err != nil {
		return nil, fmt.Errorf("metadata of %s/%s: %w", p.Namespace, p.Name, err)
	}
	return map[string]any{"metadata": m}, nil
}

// unreachable reports whether err says the API server could not be
// reached (refused, reset, timed out, no such host): a fault of the
// cluster, not of what is tested.
func unreachable(err error) bool {
	var oe *net.OpError
	var ue *url.Error
	var de *net.DNSError
	switch {
	case err == nil:
		return false
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.As(err, &oe), errors.As(err, &de):
		return true
	case errors.As(err, &ue):
		return true
	}
	s := err.Error()
	return strings.Contains(s, "connection refused") || strings.Contains(s, "connection reset") || strings.Contains(s, "Kubernetes cluster unreachable")
}

// alive reports whether the API server answers.
func (c *cluster) alive(ctx context.Context) error {
	_, err := c.cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return err
}

// ensureNamespace creates ns as kubepkg's operator does: annotated
// helm.sh/resource-policy: keep (so no uninstall removes it), labelled
// pod-security.kubernetes.io/enforce=privileged for a privileged
// component; an existing namespace only gains the label.
func (c *cluster) ensureNamespace(ctx context.Context, ns string, privileged bool) error {
	got, err := c.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Annotations: map[string]string{"helm.sh/resource-policy": "keep"}}}
		if privileged {
			n.Labels = map[string]string{podSecurityEnforce: "privileged"}
		}
		_, err = c.cs.CoreV1().Namespaces().Create(ctx, n, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	case err == nil && privileged && got.Labels[podSecurityEnforce] != "privileged":
		if got.Labels == nil {
			got.Labels = map[string]string{}
		}
		got.Labels[podSecurityEnforce] = "privileged"
		_, err = c.cs.CoreV1().Namespaces().Update(ctx, got, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	return nil
}

const podSecurityEnforce = "pod-security.kubernetes.io/enforce"
