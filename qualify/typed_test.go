package qualify

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

var (
	typedNow = metav1.NewTime(time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC))
	two      = int32(2)
)

// typedMeta is the metadata of a typedObjects object: labels,
// annotations, an owner, and the managedFields a server adds.
func typedMeta(name string) metav1.ObjectMeta {
	yes := true
	return metav1.ObjectMeta{
		Name: name, Namespace: "ns", UID: "0b5c8f5e-1d7c-4f1e-9a55-7c2b0f1a9e11", ResourceVersion: "12345", Generation: 3, CreationTimestamp: typedNow,
		Labels:          map[string]string{"app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/name": name},
		Annotations:     map[string]string{"meta.helm.sh/release-name": name, "meta.helm.sh/release-namespace": "ns"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "1a", Controller: &yes}},
		ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "helm", Operation: "Update", APIVersion: "apps/v1", Time: &typedNow, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{".":{},"f:app.kubernetes.io/name":{}}},"f:spec":{"f:replicas":{}}}`)},
			{Manager: "kube-controller-manager", Operation: "Update", APIVersion: "apps/v1", Time: &typedNow, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:replicas":{}}}`), Subresource: "status"},
		},
	}
}

func typedPodSpec() corev1.PodTemplateSpec {
	grace := int64(30)
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.example/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env:            []corev1.EnvVar{{Name: "A", Value: ""}, {Name: "B", Value: "b"}},
				Resources:      corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}, Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.1")}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}, PeriodSeconds: 10},
			}},
			RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace, SecurityContext: &corev1.PodSecurityContext{},
		},
	}
}

// typedObjects are objects of the built-in kinds the releases of the
// fixtures make, as a server holds them, their status filled in.
func typedObjects() []runtime.Object {
	cond := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: typedNow, ObservedGeneration: 3}
	surge := intstr.FromString("25%")
	return []runtime.Object{
		&appsv1.Deployment{ObjectMeta: typedMeta("deploy"),
			Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, Template: typedPodSpec(),
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge}}},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 2,
				Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", LastUpdateTime: typedNow, LastTransitionTime: typedNow}}}},
		// a Deployment just made: no status yet
		&appsv1.Deployment{ObjectMeta: typedMeta("new"), Spec: appsv1.DeploymentSpec{Replicas: &two, Template: typedPodSpec()}},
		&appsv1.StatefulSet{ObjectMeta: typedMeta("sts"),
			Spec: appsv1.StatefulSetSpec{Replicas: &two, ServiceName: "sts", Template: typedPodSpec(),
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: 3, Replicas: 2, ReadyReplicas: 1, CurrentReplicas: 2, UpdatedReplicas: 2, CurrentRevision: "sts-1", UpdateRevision: "sts-1"}},
		&appsv1.DaemonSet{ObjectMeta: typedMeta("ds"), Spec: appsv1.DaemonSetSpec{Template: typedPodSpec()},
			Status: appsv1.DaemonSetStatus{ObservedGeneration: 3, DesiredNumberScheduled: 1, CurrentNumberScheduled: 1, NumberReady: 1, NumberAvailable: 1, UpdatedNumberScheduled: 1}},
		&appsv1.ReplicaSet{ObjectMeta: typedMeta("rs"), Spec: appsv1.ReplicaSetSpec{Replicas: &two, Template: typedPodSpec()},
			Status: appsv1.ReplicaSetStatus{ObservedGeneration: 3, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, FullyLabeledReplicas: 2}},
		&batchv1.Job{ObjectMeta: typedMeta("migrate"), Spec: batchv1.JobSpec{BackoffLimit: &two, Template: typedPodSpec()},
			Status: batchv1.JobStatus{Succeeded: 1, StartTime: &typedNow, CompletionTime: &typedNow,
				Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastProbeTime: typedNow, LastTransitionTime: typedNow}}}},
		&batchv1.Job{ObjectMeta: typedMeta("failed"), Spec: batchv1.JobSpec{Template: typedPodSpec()},
			Status: batchv1.JobStatus{Failed: 3, Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}}}},
		&batchv1.CronJob{ObjectMeta: typedMeta("cron"), Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: typedPodSpec()}}}},
		&corev1.Service{ObjectMeta: typedMeta("svc"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.0.0.10", ClusterIPs: []string{"10.0.0.10"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}, Selector: map[string]string{"app": "x"}}},
		&corev1.Service{ObjectMeta: typedMeta("lb"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 443}}}},
		&corev1.PersistentVolumeClaim{ObjectMeta: typedMeta("pvc"),
			Spec:   corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeName: "pv-1", Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1024Mi")}}},
		&corev1.Pod{ObjectMeta: typedMeta("pod"), Spec: typedPodSpec().Spec,
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: typedNow}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, ImageID: "registry.example/app@sha256:0123", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: typedNow}}}}}},
		&networkingv1.NetworkPolicy{ObjectMeta: typedMeta("np"), Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}}}},
		&policyv1.PodDisruptionBudget{ObjectMeta: typedMeta("pdb"), Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &surge},
			Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 3, CurrentHealthy: 2, DesiredHealthy: 1, ExpectedPods: 2, Conditions: []metav1.Condition{cond}}},
		&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: typedMeta("hpa"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "deploy"}}},
	}
}

// TestTypedToUnstructured: an object of a built-in kind sent in protobuf,
// decoded into its type and converted is the object the JSON read gives
// (apiVersion and kind included) but its managedFields, and kstatus says
// the same of both.
func TestTypedToUnstructured(t *testing.T) {
	pb := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	for _, obj := range typedObjects() {
		gvks, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			t.Fatal(err)
		}
		gvk := gvks[0]
		name := gvk.Kind + " " + obj.(metav1.Object).GetName()
		t.Run(name, func(t *testing.T) {
			if !typedKind(gvk) {
				t.Fatalf("%s is not read typed", gvk)
			}
			// what the dynamic client reads: the server's JSON, with
			// apiVersion and kind
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			data, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			var want unstructured.Unstructured
			if _, _, err := unstructured.UnstructuredJSONScheme.Decode(data, nil, &want); err != nil {
				t.Fatal(err)
			}
			if len(want.GetManagedFields()) == 0 {
				t.Fatal("the fixture has no managedFields")
			}
			unstructured.RemoveNestedField(want.Object, "metadata", "managedFields")

			// what a typed read gets: protobuf, decoded into the type
			var wire bytes.Buffer
			if err := pb.Encode(obj, &wire); err != nil {
				t.Fatal(err)
			}
			typed, err := scheme.Scheme.New(gvk)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := pb.Decode(wire.Bytes(), nil, typed); err != nil {
				t.Fatal(err)
			}
			typed.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{}) // as list items come
			got, err := typedToUnstructured(typed, gvk)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got.Object, want.Object) {
				g, _ := json.Marshal(got.Object)
				w, _ := json.Marshal(want.Object)
				t.Errorf("typed read\n  %s\nJSON read without managedFields\n  %s", g, w)
			}
			rg, err := status.Compute(got)
			if err != nil {
				t.Fatal(err)
			}
			rw, err := status.Compute(&want)
			if err != nil {
				t.Fatal(err)
			}
			if rg.Status != rw.Status || rg.Message != rw.Message {
				t.Errorf("kstatus: %s %q from the typed read, %s %q from JSON", rg.Status, rg.Message, rw.Status, rw.Message)
			}
		})
	}
}

// TestTypedKind: the built-in kinds are read typed; custom resources,
// kinds of unknown versions and lists are not.
func TestTypedKind(t *testing.T) {
	for _, tc := range []struct {
		gvk  schema.GroupVersionKind
		want bool
	}{
		{appsv1.SchemeGroupVersion.WithKind("Deployment"), true},
		{corev1.SchemeGroupVersion.WithKind("Service"), true},
		{batchv1.SchemeGroupVersion.WithKind("Job"), true},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, false},
		{schema.GroupVersionKind{Group: "apps", Version: "v9", Kind: "Deployment"}, false},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Deployment"}, false},
	} {
		if got := typedKind(tc.gvk); got != tc.want {
			t.Errorf("typedKind(%s) = %v, want %v", tc.gvk, got, tc.want)
		}
	}
}

// TestReadsOf: what the waiter reads of each object it waits for.
func TestReadsOf(t *testing.T) {
	deploy := appsv1.SchemeGroupVersion.WithKind("Deployment")
	cm := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	o := func(gvk schema.GroupVersionKind, ns, name string) object {
		return object{GVK: gvk, Namespace: ns, Name: name}
	}
	for _, tc := range []struct {
		name               string
		pending            []*pendingCheck
		whole, typed, meta []object
	}{
		{"kstatus alone: typed, or metadata for status-less kinds",
			[]*pendingCheck{{obj: o(deploy, "a", "web"), check: "kstatus"}, {obj: o(cm, "a", "conf"), check: "kstatus"}, {obj: o(widget, "a", "w"), check: "kstatus"}},
			nil, []object{o(deploy, "a", "web"), o(widget, "a", "w")}, []object{o(cm, "a", "conf")}},
		{"healthCheckExprs: whole",
			[]*pendingCheck{{obj: o(deploy, "a", "web"), check: "healthCheckExprs"}},
			[]object{o(deploy, "a", "web")}, nil, nil},
		{"a readyWhen condition on an object kstatus also checks: whole, once",
			[]*pendingCheck{{obj: o(deploy, "a", "web"), check: "kstatus"}, {obj: o(deploy, "a", "web"), check: "readyWhen Available=True"}},
			[]object{o(deploy, "a", "web")}, nil, nil},
		{"a ConfigMap a readyWhen reads: whole",
			[]*pendingCheck{{obj: o(cm, "a", "conf"), check: "readyWhen Synced=True"}},
			[]object{o(cm, "a", "conf")}, nil, nil},
		{"kstatus beside a whole read of its kind and namespace: whole, in the same list",
			[]*pendingCheck{{obj: o(deploy, "a", "web"), check: "kstatus"}, {obj: o(deploy, "a", "api"), check: "healthCheckExprs"}, {obj: o(deploy, "b", "web"), check: "kstatus"}},
			[]object{o(deploy, "a", "api"), o(deploy, "a", "web")}, []object{o(deploy, "b", "web")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole, typed, meta := readsOf(tc.pending)
			if !slices.Equal(whole, tc.whole) || !slices.Equal(typed, tc.typed) || !slices.Equal(meta, tc.meta) {
				t.Errorf("readsOf = whole %v, typed %v, meta %v; want whole %v, typed %v, meta %v", whole, typed, meta, tc.whole, tc.typed, tc.meta)
			}
		})
	}
}
