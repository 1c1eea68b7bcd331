package controlplane

import (
	"bytes"
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// RESTConfig returns the administrator's client configuration.
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
}

// startNodes creates the fake nodes and waits until kwok has made them
// Ready and the controller manager has given the default namespace its
// service account (pods cannot be created before).
func (c *Cluster) startNodes(ctx context.Context, o Options) error {
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, n := range o.Nodes {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name: n.Name,
			Labels: map[string]string{
				"kubernetes.io/arch": n.Arch, "kubernetes.io/os": "linux",
				"kubernetes.io/hostname": n.Name, "type": "kwok",
			},
			Annotations: map[string]string{kwokAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
		}}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", n.Name, err)
		}
	}
	if err := defaultStorageClass(ctx, cs); err != nil {
		return err
	}
	kwok := c.procs[len(c.procs)-1]
	for restarts := 0; ; restarts++ {
		err := nodesReady(ctx, cs, kwok, o.Nodes)
		if err == nil {
			break
		}
		if restarts == maxKwokRestarts || !kwokRaced(kwok) {
			return err
		}
		if kwok, err = c.restart(kwok); err != nil {
			return err
		}
	}
	cm := c.procs[len(c.procs)-3]
	return poll(ctx, cm, func() error {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

// maxKwokRestarts is how often startNodes starts kwok again after the
// start-up race of kwokRaced.
const maxKwokRestarts = 2

// kwokRaced says whether kwok exited with the data race of kwok v0.8.0's
// start: its node and pod controllers initialise their Stages' CEL
// environments at once, and easycel (v0.6.0, types.go) fills a shared
// type map without a lock, so the Go runtime now and then stops kwok with
// "fatal error: concurrent map writes" before any node is Ready. Nothing
// was done yet, so starting it again is safe; any other exit is an error.
func kwokRaced(kwok *process) bool {
	select {
	case <-kwok.done:
	default:
		return false
	}
	b, err := os.ReadFile(kwok.log.Name())
	return err == nil && bytes.Contains(b, []byte("fatal error: concurrent map writes")) && bytes.Contains(b, []byte("easycel"))
}

// nodesReady waits until kwok has made every node Ready.
func nodesReady(ctx context.Context, cs kubernetes.Interface, kwok *process, nodes []Node) error {
	for _, n := range nodes {
		if err := poll(ctx, kwok, func() error {
			node, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					return nil
				}
			}
			return fmt.Errorf("node %s is not Ready", n.Name)
		}); err != nil {
			return err
		}
	}
	return nil
}

// defaultStorageClass makes the cluster's default StorageClass, standard,
// as kind's: charts that claim storage (the Foreman stack's
// PersistentVolumeClaims) get a bound volume from the controller manager's
// hostPath provisioner, and the volume goes with the claim.
func defaultStorageClass(ctx context.Context, cs kubernetes.Interface) error {
	del := corev1.PersistentVolumeReclaimDelete
	sc := &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: "standard", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner: "kubernetes.io/host-path", ReclaimPolicy: &del,
	}
	if _, err := cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the default StorageClass: %w", err)
	}
	return nil
}
