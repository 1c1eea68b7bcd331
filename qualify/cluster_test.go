package qualify

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// requestLog records the method and path of every request a client makes.
type requestLog struct {
	mu   sync.Mutex
	reqs []string
	rt   http.RoundTripper
}

func (l *requestLog) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.reqs = append(l.reqs, r.Method+" "+r.URL.Path)
	l.mu.Unlock()
	return l.rt.RoundTrip(r)
}

// TestGetAll: the live objects of a release are read a list per kind and
// namespace when there are several, one by one otherwise, and Secrets
// always one by one (their namespace's list holds Helm's release
// records); a missing object is absent, and what is read is what a get
// reads.
func TestGetAll(t *testing.T) {
	cp := testCluster(t)
	ctx := context.Background()
	c, err := connect(cp.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	const ns = "getall"
	if err := c.ensureNamespace(ctx, ns, false); err != nil {
		t.Fatal(err)
	}
	cm := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	sec := corev1.SchemeGroupVersion.WithKind("Secret")
	var objs []object
	for _, name := range []string{"a", "b", "c"} {
		if _, err := c.cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, object{GVK: cm, Namespace: ns, Name: name})
		if _, err := c.cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s" + name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if name != "c" {
			objs = append(objs, object{GVK: sec, Namespace: ns, Name: "s" + name})
		}
	}
	missing := object{GVK: cm, Namespace: ns, Name: "missing"}
	nsObj := object{GVK: corev1.SchemeGroupVersion.WithKind("Namespace"), Name: ns}
	objs = append(objs, missing, nsObj)

	log := &requestLog{}
	cfg := rest.CopyConfig(c.config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { log.rt = rt; return log }
	if c.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	live, err := c.getAll(ctx, objs, readWhole)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(log.reqs)
	want := []string{
		"GET /api/v1/namespaces/getall",
		"GET /api/v1/namespaces/getall/configmaps",
		"GET /api/v1/namespaces/getall/secrets/sa",
		"GET /api/v1/namespaces/getall/secrets/sb",
	}
	if !slices.Equal(log.reqs, want) {
		t.Errorf("getAll made the requests\n  %v\nwant\n  %v", log.reqs, want)
	}
	for _, o := range objs {
		u := live[o]
		if o == missing {
			if u != nil {
				t.Errorf("getAll found %s, which does not exist", o)
			}
			continue
		}
		got, err := c.get(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if u == nil || got == nil || u.GetUID() != got.GetUID() || u.GetResourceVersion() != got.GetResourceVersion() || u.GetKind() != o.GVK.Kind || u.GetAPIVersion() != "v1" {
			t.Errorf("getAll read %s as %v, a get reads %v", o, u, got)
		}
	}
	if d, _, _ := unstructured.NestedStringMap(live[objs[0]].Object, "data"); d["k"] != "a" {
		t.Errorf("ConfigMap a read with data %v, want k: a", d)
	}

	// Typed (protobuf into client-go's types, converted): the same
	// requests as whole reads, the same objects but their managedFields.
	log.reqs = nil
	shared := rest.CopyConfig(c.shared)
	shared.WrapTransport = cfg.WrapTransport
	c.shared = shared
	typedLive, err := c.getAll(ctx, objs, readTyped)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(log.reqs)
	want = []string{
		"GET /api/v1/namespaces/getall",
		"GET /api/v1/namespaces/getall/configmaps",
		"GET /api/v1/namespaces/getall/secrets/sa",
		"GET /api/v1/namespaces/getall/secrets/sb",
	}
	if !slices.Equal(log.reqs, want) {
		t.Errorf("getAll (typed) made the requests\n  %v\nwant\n  %v", log.reqs, want)
	}
	for _, o := range objs {
		u, full := typedLive[o], live[o]
		if o == missing {
			if u != nil {
				t.Errorf("getAll (typed) found %s, which does not exist", o)
			}
			continue
		}
		if u == nil {
			t.Errorf("getAll (typed) did not find %s", o)
			continue
		}
		if len(full.GetManagedFields()) == 0 {
			t.Errorf("%s read whole has no managedFields", o)
		}
		whole := full.DeepCopy()
		unstructured.RemoveNestedField(whole.Object, "metadata", "managedFields")
		if !equality.Semantic.DeepEqual(u.Object, whole.Object) {
			t.Errorf("getAll (typed) read %s as\n  %v\nthe whole object without managedFields is\n  %v", o, u.Object, whole.Object)
		}
	}

	// Metadata only: Secrets listed too, no data, the same objects, the
	// same kstatus for the kinds the waiter reads so (statusless).
	log.reqs = nil
	if c.meta, err = metadata.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	metaLive, err := c.getAll(ctx, objs, readMeta)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(log.reqs)
	want = []string{
		"GET /api/v1/namespaces/getall",
		"GET /api/v1/namespaces/getall/configmaps",
		"GET /api/v1/namespaces/getall/secrets",
	}
	if !slices.Equal(log.reqs, want) {
		t.Errorf("getAll (metadata) made the requests\n  %v\nwant\n  %v", log.reqs, want)
	}
	for _, o := range objs {
		u, full := metaLive[o], live[o]
		if o == missing {
			if u != nil {
				t.Errorf("getAll (metadata) found %s, which does not exist", o)
			}
			continue
		}
		if u == nil || u.GetUID() != full.GetUID() || u.GetResourceVersion() != full.GetResourceVersion() || u.GroupVersionKind() != o.GVK || u.GetName() != o.Name {
			t.Errorf("getAll (metadata) read %s as %v, the whole object is %v", o, u, full)
			continue
		}
		if _, ok := u.Object["data"]; ok {
			t.Errorf("getAll (metadata) read %s with its data", o)
		}
		if statusless[o.GVK.GroupKind()] {
			d1, f1, l1 := kstatusEval(u)
			d2, f2, l2 := kstatusEval(full)
			if d1 != d2 || f1 != f2 || l1 != l2 {
				t.Errorf("kstatus of %s: %v %v %q from its metadata, %v %v %q from the whole object", o, d1, f1, l1, d2, f2, l2)
			}
		}
	}
}
