package qualify

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ranPod is one pod a release runs, where it ran and its images.
type ranPod struct {
	Namespace, Name, Node string
	Arch, Runtime         string
	Images                []ranImage
}

type ranImage struct {
	Container string
	Image     string // as the pod spec has it
	ImageID   string // as the node reports it ("" until it ran)
}

// podsOf returns the pods in namespaces that objects of the releases
// own, directly or through a ReplicaSet, Job or ControllerRevision owner:
// the pods the releases run, and no one else's.
func (c *cluster) podsOf(ctx context.Context, owners map[types.UID]bool, namespaces []string) ([]ranPod, error) {
	nodes := map[string]*corev1.Node{}
	var out []ranPod
	for _, ns := range namespaces {
		pods, err := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			ours, err := c.owned(ctx, p.Namespace, p.UID, p.OwnerReferences, owners, 0)
			if err != nil {
				return nil, err
			}
			if !ours {
				continue
			}
			rp := ranPod{Namespace: p.Namespace, Name: p.Name, Node: p.Spec.NodeName}
			if n := p.Spec.NodeName; n != "" {
				if nodes[n] == nil {
					node, err := c.cs.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
					if err != nil {
						return nil, err
					}
					nodes[n] = node
				}
				rp.Arch = nodes[n].Status.NodeInfo.Architecture
				rp.Runtime = nodes[n].Status.NodeInfo.ContainerRuntimeVersion
			}
			ids := map[string]string{}
			for _, s := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
				ids[s.Name] = s.ImageID
			}
			for _, ct := range append(slices.Clone(p.Spec.InitContainers), p.Spec.Containers...) {
				rp.Images = append(rp.Images, ranImage{Container: ct.Name, Image: ct.Image, ImageID: ids[ct.Name]})
			}
			out = append(out, rp)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name
	})
	return out, nil
}

// owned reports whether an object with these owner references belongs to
// one of owners, following owners up to three levels.
func (c *cluster) owned(ctx context.Context, ns string, uid types.UID, refs []metav1.OwnerReference, owners map[types.UID]bool, depth int) (bool, error) {
	if owners[uid] {
		return true, nil
	}
	if depth > 3 {
		return false, nil
	}
	for _, ref := range refs {
		if owners[ref.UID] {
			return true, nil
		}
		var parent metav1.Object
		var err error
		switch ref.Kind {
		case "ReplicaSet":
			parent, err = c.cs.AppsV1().ReplicaSets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		case "Job":
			parent, err = c.cs.BatchV1().Jobs(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		case "ControllerRevision":
			parent, err = c.cs.AppsV1().ControllerRevisions(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		default:
			continue
		}
		if err != nil {
			continue // gone since: not ours to judge
		}
		if ok, err := c.owned(ctx, ns, parent.GetUID(), parent.GetOwnerReferences(), owners, depth+1); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// checkImages returns one problem per container whose image is not pinned
// by digest, or whose digest is not among those the index pins (pinned),
// or whose node reports another digest than the one asked for. The digest
// is what is judged: a registry mirror may serve a pinned image under
// another name.
func checkImages(pods []ranPod, pinned []string) []string {
	digests := map[string]string{} // digest -> pinned reference
	for _, ref := range pinned {
		if _, d, ok := strings.Cut(ref, "@"); ok {
			digests[d] = ref
		}
	}
	var problems []string
	for _, p := range pods {
		for _, im := range p.Images {
			where := fmt.Sprintf("pod %s/%s container %s", p.Namespace, p.Name, im.Container)
			_, d, ok := strings.Cut(im.Image, "@")
			if !ok || !strings.HasPrefix(d, "sha256:") {
				problems = append(problems, fmt.Sprintf("%s runs %s, which is not pinned by digest; every image must be the index's exact reference (registry/repo:tag@sha256:…)", where, im.Image))
				continue
			}
			if _, ok := digests[d]; !ok {
				problems = append(problems, fmt.Sprintf("%s runs %s, whose digest the index does not pin for what is tested (it pins %s)", where, im.Image, orNone(pinned)))
				continue
			}
			if im.ImageID != "" && strings.Contains(im.ImageID, "sha256:") && !strings.HasSuffix(im.ImageID, d) {
				problems = append(problems, fmt.Sprintf("%s: the node ran %s, not the %s it was asked for", where, im.ImageID, d))
			}
		}
	}
	return problems
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	if len(s) > 4 {
		return strings.Join(s[:4], ", ") + fmt.Sprintf(" and %d more", len(s)-4)
	}
	return strings.Join(s, ", ")
}
