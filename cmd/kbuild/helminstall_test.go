package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"kbuild.dev/kbuild/internal/controlplane"
	"kbuild.dev/kbuild/internal/testenv"
)

// TestHelmInstallExamples installs the bundled examples' charts, as kbuild
// pushed them, into a real control plane with each real helm CLI (Helm 3
// and Helm 4), by version and by manifest digest, waits until Helm says
// they are ready (Helm 4's --wait is the kstatus watcher), checks through
// the API server that every Deployment is available running images pinned
// by digest and that the CRD is served, then uninstalls and checks that
// nothing of the release is left but its CRD.
func TestHelmInstallExamples(t *testing.T) {
	reg := testenv.Registry(t)
	helms := testenv.Helms(t)
	c := controlplane.ForTest(t)
	base := uniqueRepo(t, reg)
	out := t.TempDir()
	r := kbuild(t, repoRoot, []string{"SOURCE_DATE_EPOCH=1700000000"}, "build", "examples/smart-proxy", "examples/virt-template",
		"--registry", base, "--plain-http", "-o", out, "--cache-dir", t.TempDir())
	if r.code != 0 {
		t.Fatalf("kbuild build: %s", r)
	}
	type chart struct{ pkg, repo, version, manifest, namespace string }
	var charts []chart
	for _, b := range readRecords(t, out) {
		for _, ch := range b.Info.Charts {
			ref := strings.TrimPrefix(ch.Ref, "oci://")
			i := strings.LastIndex(ref, ":")
			// The namespace the record installs into, as kubepkg would;
			// else one of the test's own.
			ns := ""
			for _, v := range b.Record.Spec.Variants {
				for _, comp := range v.Components {
					if comp.Chart != nil && comp.Chart.Name == ch.Name && comp.Install != nil {
						ns = comp.Install.Namespace
					}
				}
			}
			charts = append(charts, chart{b.Record.Metadata.Name, ref[:i], ref[i+1:], ch.Manifest, ns})
		}
	}
	if len(charts) != 2 {
		t.Fatalf("%d charts pushed, want smart-proxy and virt-template: %+v", len(charts), charts)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	for _, h := range helms {
		t.Run(h.Name, func(t *testing.T) {
			home := t.TempDir()
			helm := func(args ...string) string {
				t.Helper()
				cmd := exec.Command(h.Path, append(args, "--kubeconfig", c.Kubeconfig)...)
				cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
				b, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s %s: %v\n%s", h.Name, strings.Join(args, " "), err, b)
				}
				return string(b)
			}
			for i, ch := range charts {
				ns := ch.namespace
				if ns == "" {
					ns = h.Name + "-" + ch.pkg
				}
				// One chart by version, the other by digest: each Helm
				// installs both kinds of reference.
				src := []string{"oci://" + ch.repo + "@" + ch.manifest}
				if i == 0 {
					src = []string{"oci://" + ch.repo, "--version", ch.version}
				}
				args := append([]string{"install", ch.pkg}, src...)
				helm(append(args, "--plain-http", "-n", ns, "--create-namespace", "--wait", "--timeout", "3m")...)
				if s := helm("status", ch.pkg, "-n", ns); !strings.Contains(s, "STATUS: deployed") {
					t.Errorf("helm status %s -n %s:\n%s", ch.pkg, ns, s)
				}
				deps, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(deps.Items) == 0 {
					t.Errorf("%s: no Deployment in %s after helm install", ch.pkg, ns)
				}
				for _, d := range deps.Items {
					want := int32(1)
					if d.Spec.Replicas != nil {
						want = *d.Spec.Replicas
					}
					if d.Status.AvailableReplicas != want {
						t.Errorf("%s/%s: %d of %d replicas available after helm install --wait", ns, d.Name, d.Status.AvailableReplicas, want)
					}
					for _, ctr := range d.Spec.Template.Spec.Containers {
						if !strings.Contains(ctr.Image, "@sha256:") {
							t.Errorf("%s/%s: container %s runs %s, not pinned by digest", ns, d.Name, ctr.Name, ctr.Image)
						}
					}
				}
				helm("uninstall", ch.pkg, "-n", ns, "--wait", "--timeout", "2m")
				deadline := time.Now().Add(time.Minute)
				for {
					deps, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
					if err != nil {
						t.Fatal(err)
					}
					if len(deps.Items) == 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Errorf("%s: %d Deployment(s) left in %s after helm uninstall", ch.pkg, len(deps.Items), ns)
						break
					}
					time.Sleep(200 * time.Millisecond)
				}
			}
		})
	}
	// The CRD of virt-template stays after both uninstalls, as Helm keeps crds/.
	crds, err := cs.Discovery().ServerResourcesForGroupVersion("template.kubevirt.io/v1alpha1")
	if err != nil || len(crds.APIResources) == 0 {
		t.Errorf("virt-template's API is not served after uninstall (Helm keeps crds/): %v", err)
	}
}
