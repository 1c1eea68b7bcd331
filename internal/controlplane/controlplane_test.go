package controlplane

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestDeploymentBecomesAvailable: the real scheduler and controllers and
// kwok's stages take a Deployment to 2/2 available on the fake node.
func TestDeploymentBecomesAvailable(t *testing.T) {
	c := ForTest(t)
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	replicas := int32(2)
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "registry.example/web:1@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		got, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.AvailableReplicas == 2 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("deployment not available: %+v", got.Status)
		case <-time.After(200 * time.Millisecond):
		}
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != "v1.37.2" {
		t.Errorf("server version %s, want v1.37.2 (tools/controlplane/go.mod)", v.GitVersion)
	}
}

// TestPodStages: kbuild's Stages end each kind of pod as the tests need:
// a Helm test pod succeeds, a pod annotated with an exit code fails, a
// pod annotated never-ready runs unready.
func TestPodStages(t *testing.T) {
	c := ForTest(t)
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	img := "registry.example/web:1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name  string
		ann   map[string]string
		phase corev1.PodPhase
		ready bool
	}{
		{"helm-test", map[string]string{"helm.sh/hook": "test"}, corev1.PodSucceeded, false},
		{"exit", map[string]string{"kbuild.dev/test-exit-code": "2"}, corev1.PodFailed, false},
		{"unready", map[string]string{"kbuild.dev/test-never-ready": "true"}, corev1.PodRunning, false},
		{"plain", nil, corev1.PodRunning, true},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: tc.name, Namespace: "default", Annotations: tc.ann},
			Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: img}}},
		}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var last *corev1.Pod
		for {
			last, err = cs.CoreV1().Pods("default").Get(ctx, tc.name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ready := false
			for _, cond := range last.Status.Conditions {
				if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
					ready = true
				}
			}
			if last.Status.Phase == tc.phase && ready == tc.ready {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("pod %s: phase %s, conditions %+v; want %s, ready %v", tc.name, last.Status.Phase, last.Status.Conditions, tc.phase, tc.ready)
			case <-time.After(200 * time.Millisecond):
			}
		}
		t.Logf("pod %s: %s, ready %v after %s", tc.name, tc.phase, tc.ready, time.Since(start).Round(time.Millisecond))
		if tc.name == "exit" {
			if cs := last.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 2 {
				t.Errorf("pod exit: container statuses %+v, want terminated with exit code 2", cs)
			}
		}
	}
}

// TestClaimIsBound: a PersistentVolumeClaim of no class gets a volume of
// the default StorageClass, as on kind, and the volume goes with it.
func TestClaimIsBound(t *testing.T) {
	c := ForTest(t)
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Gi")}},
		},
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims("default").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var volume string
	until(ctx, t, "the claim is bound", func() bool {
		got, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
		volume = got.Spec.VolumeName
		return err == nil && got.Status.Phase == corev1.ClaimBound
	})
	if err := cs.CoreV1().PersistentVolumeClaims("default").Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	until(ctx, t, "the volume "+volume+" is removed", func() bool {
		_, err := cs.CoreV1().PersistentVolumes().Get(ctx, volume, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

func until(ctx context.Context, t *testing.T, what string, done func() bool) {
	t.Helper()
	for !done() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not in time", what)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
