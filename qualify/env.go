package qualify

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kbuild.dev/kbuild/evidence"
)

// environment reads the environment from the cluster, never from flags:
// kubernetes (the server's MAJOR.MINOR), server (its exact version), arch
// and runtime (of its nodes; once pods ran, of the nodes they ran on).
func (r *run) environment(ctx context.Context) error {
	v, err := r.c.cs.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("%w: reading the server version: %v", ErrCluster, err)
	}
	env := map[string]string{
		"kubernetes": evidence.KubernetesMinor(strings.TrimPrefix(v.GitVersion, "v")),
		"server":     envValue(v.GitVersion),
	}
	nodes, err := r.c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("%w: listing nodes: %v", ErrCluster, err)
	}
	var arches, runtimes []string
	for _, n := range nodes.Items {
		if a := n.Status.NodeInfo.Architecture; a != "" && !slices.Contains(arches, a) {
			arches = append(arches, a)
		}
		if rt := runtimeName(n.Status.NodeInfo.ContainerRuntimeVersion); rt != "" && !slices.Contains(runtimes, rt) {
			runtimes = append(runtimes, rt)
		}
	}
	slices.Sort(arches)
	slices.Sort(runtimes)
	if len(arches) == 1 {
		env["arch"] = arches[0]
	}
	if len(runtimes) == 1 {
		env["runtime"] = runtimes[0]
	}
	r.res.Env = env
	r.logf("environment (read from the cluster): server %s, nodes %d, architectures %s, runtimes %s",
		v.GitVersion, len(nodes.Items), orNone(arches), orNone(runtimes))
	return nil
}

// archOfPods sets arch and runtime from the nodes the pods ran on; pods on
// more than one architecture make the environment ambiguous, and the
// evidence of one run names one architecture.
func (r *run) archOfPods(pods []ranPod) error {
	var arches, runtimes []string
	for _, p := range pods {
		if p.Arch != "" && !slices.Contains(arches, p.Arch) {
			arches = append(arches, p.Arch)
		}
		if rt := runtimeName(p.Runtime); rt != "" && !slices.Contains(runtimes, rt) {
			runtimes = append(runtimes, rt)
		}
	}
	slices.Sort(arches)
	switch len(arches) {
	case 0:
	case 1:
		r.res.Env["arch"] = arches[0]
	default:
		return fmt.Errorf("the releases' pods ran on nodes of %d architectures (%s); evidence names one: test on a cluster of one architecture, or pin the pods with a nodeSelector on kubernetes.io/arch", len(arches), strings.Join(arches, ", "))
	}
	if len(runtimes) == 1 {
		r.res.Env["runtime"] = runtimes[0]
	}
	return nil
}

var notEnv = regexp.MustCompile(`[^A-Za-z0-9._+-]+`)

// runtimeName turns a node's containerRuntimeVersion
// ("containerd://1.7.24", "kwok://v0.8.0") into an environment value
// ("containerd-1.7.24", "kwok-v0.8.0").
func runtimeName(s string) string {
	return envValue(strings.Replace(s, "://", "-", 1))
}

func envValue(s string) string {
	s = strings.Trim(notEnv.ReplaceAllString(s, "-"), "-")
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}
