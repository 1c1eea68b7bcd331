package patches

import (
	"fmt"
	"slices"
	"strings"

	"kbuild.dev/kbuild/recipe"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml/merge2"
)

// Apply applies the patches in order to the objects their kind and name
// select (an empty field matches any; a patch must set at least one).
//
// Each patch has exactly one form:
//   - merge: an RFC 7386 JSON merge patch. Maps merge per key, null deletes a
//     key, lists and scalars replace.
//   - strategic: a Kubernetes strategic merge patch, merged with kyaml's
//     merge2 and its built-in Kubernetes schema. For the workload kinds
//     (Deployment, StatefulSet, DaemonSet, Job, CronJob, Pod, ...) lists such
//     as containers, initContainers, volumes and env merge by name and ports
//     by containerPort (a missing protocol counts as TCP, as the API server
//     defaults it). The directives $patch (merge, replace, delete),
//     $retainKeys, $deleteFromPrimitiveList/FIELD and $setElementOrder/FIELD
//     (accepted and ignored) work. Kinds outside the schema, such as custom
//     resources, merge maps and replace lists.
//   - json6902: RFC 6902 operations add, remove, replace, move, copy, test.
//
// Keys keep their order and untouched parts their comments. An object is
// patched with its YAML aliases and merge keys written out, so a patch
// changes the node its path names and no other place that shared it. A
// patch that matches no object is an error wrapping ErrNoMatch that lists
// the objects of that kind that do exist. Each object is patched as a whole or not at all,
// but Apply stops at the first failing patch and keeps the patches before it,
// so discard the objects on error.
func Apply(objs []*Object, ps []recipe.Patch) error {
	for i, p := range ps {
		if err := apply(objs, i, p); err != nil {
			return err
		}
	}
	return nil
}

// apply applies patch number i to the objects it selects.
func apply(objs []*Object, i int, p recipe.Patch) error {
	var forms []string
	if p.Merge != nil {
		forms = append(forms, "merge")
	}
	if p.Strategic != nil {
		forms = append(forms, "strategic")
	}
	if p.JSON6902 != nil {
		forms = append(forms, "json6902")
	}
	if len(forms) != 1 {
		return fmt.Errorf("patch %d %s: has %d of merge, strategic and json6902 (%s); set exactly one", i, selector(p.Kind, p.Name), len(forms), strings.Join(forms, ", "))
	}
	if p.Kind == "" && p.Name == "" {
		return fmt.Errorf("patch %d: neither kind nor name is set; say which objects to patch, e.g. {kind: Deployment, name: web}", i)
	}
	matched := false
	for _, o := range objs {
		if !o.matches(p.Kind, p.Name) {
			continue
		}
		matched = true
		// Patch a copy so a failure leaves the object whole, with its
		// aliases resolved so the patch changes the node it names only.
		y, err := resolveAliases(o.Node.YNode())
		if err != nil {
			return fmt.Errorf("patch %d (%s) on %s: %w", i, forms[0], o, err)
		}
		n := yaml.NewRNode(y)
		switch forms[0] {
		case "merge":
			err = mergePatch(n, p.Merge)
		case "strategic":
			n, err = strategicPatch(n, p.Strategic)
		default:
			err = jsonPatch(n.YNode(), p.JSON6902)
		}
		if err != nil {
			return fmt.Errorf("patch %d (%s) on %s: %w", i, forms[0], o, err)
		}
		o.changed = o.changed || !onlyTests(p)
		o.Node = n
	}
	if !matched {
		return fmt.Errorf("patch %d (%s) %s: %w; %s", i, forms[0], selector(p.Kind, p.Name), ErrNoMatch, present(objs, p.Kind))
	}
	return nil
}

// onlyTests reports whether p is a json6902 patch of test operations only,
// which change nothing: the object keeps its upstream bytes.
func onlyTests(p recipe.Patch) bool {
	if p.JSON6902 == nil {
		return false
	}
	for _, op := range p.JSON6902 {
		if op.Op != "test" {
			return false
		}
	}
	return true
}

// mergePatch applies an RFC 7386 merge patch to the object n.
func mergePatch(n *yaml.RNode, patch map[string]any) error {
	p, err := nodeFromValue(patch)
	if err != nil {
		return err
	}
	mergeNode(n.YNode(), p)
	return nil
}

// mergeNode merges p into n by RFC 7386 and returns the result: a mapping p
// is merged into n in place (n becomes a mapping if it was not one), anything
// else replaces n. New keys are appended in p's order.
func mergeNode(n, p *yaml.Node) *yaml.Node {
	if p.Kind != yaml.MappingNode {
		return p
	}
	if n == nil || n.Kind != yaml.MappingNode {
		n = &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	}
	// Keys are found through a map, not a scan per key: merging many keys
	// into a large mapping stays linear.
	pos := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if _, dup := pos[n.Content[i].Value]; !dup {
			pos[n.Content[i].Value] = i
		}
	}
	deleted := map[int]bool{}
	for i := 0; i+1 < len(p.Content); i += 2 {
		key, v := p.Content[i].Value, p.Content[i+1]
		at, ok := pos[key]
		switch {
		case isNull(v):
			if ok {
				deleted[at] = true
				delete(pos, key)
			}
		case ok:
			m := mergeNode(n.Content[at+1], v)
			keepComment(n.Content[at+1], m)
			n.Content[at+1] = m
		default:
			if len(n.Content) == 0 {
				n.Style &^= yaml.FlowStyle // {} grows into a block mapping
			}
			pos[key] = len(n.Content)
			n.Content = append(n.Content, stringNode(key), mergeNode(nil, v))
		}
	}
	if len(deleted) > 0 {
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			if !deleted[i] {
				kept = append(kept, n.Content[i], n.Content[i+1])
			}
		}
		n.Content = kept
	}
	return n
}

// strategicPatch applies a Kubernetes strategic merge patch to the object n
// and returns the result.
func strategicPatch(n *yaml.RNode, patch map[string]any) (*yaml.RNode, error) {
	p, err := nodeFromValue(patch)
	if err != nil {
		return nil, err
	}
	alignPatch(n.YNode(), p)
	dirs := hasDirective(p)
	out, err := merge2.Merge(yaml.NewRNode(p), n, yaml.MergeOptions{ListIncreaseDirection: yaml.MergeOptionsListAppend})
	if err != nil {
		return nil, err
	}
	if dirs {
		directives(out.YNode())
	}
	return out, nil
}

// Strategic merge patch directives that merge2 leaves in the merged object.
const (
	retainKeys          = "$retainKeys"
	deleteFromPrimitive = "$deleteFromPrimitiveList/"
	setElementOrder     = "$setElementOrder/"
	patchKey            = "$patch"
)

// hasDirective reports whether the patch uses a directive that directives
// may have to carry out after the merge.
func hasDirective(n *yaml.Node) bool {
	if n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			if strings.HasPrefix(n.Content[i].Value, "$") {
				return true
			}
		}
	}
	return slices.ContainsFunc(n.Content, hasDirective)
}

// directives carries out what merge2 leaves to do in the merged object n:
// the $retainKeys, $deleteFromPrimitiveList/ and $setElementOrder/ keys, and
// the list-level {$patch: ...} items merge2 copies into the lists it replaces
// rather than merges (lists without a merge key in the schema).
func directives(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		listDirectives(n)
		mapDirectives(n)
	}
	for _, c := range n.Content {
		directives(c)
	}
}

// listDirectives handles {$patch: ...} items in the lists of mapping m: with
// delete the list goes, with replace or merge only the item.
func listDirectives(m *yaml.Node) {
	for i := 1; i < len(m.Content); i += 2 {
		switch listPatch(m.Content[i]) {
		case "":
		case "delete":
			m.Content = slices.Delete(m.Content, i-1, i+1)
			i -= 2
		default:
			m.Content[i].Content = slices.DeleteFunc(m.Content[i].Content, isListPatch)
		}
	}
}

// mapDirectives carries out and removes the directive keys of mapping m.
func mapDirectives(m *yaml.Node) {
	var retain []string
	hasRetain := false
	deletes := map[string][]string{}
	for i := 0; i+1 < len(m.Content); {
		k, v := m.Content[i].Value, m.Content[i+1]
		switch {
		case k == retainKeys:
			hasRetain, retain = true, scalars(v)
		case strings.HasPrefix(k, deleteFromPrimitive):
			deletes[strings.TrimPrefix(k, deleteFromPrimitive)] = scalars(v)
		case strings.HasPrefix(k, setElementOrder):
		default:
			i += 2
			continue
		}
		m.Content = slices.Delete(m.Content, i, i+2)
	}
	for f, vals := range deletes {
		if l := lookup(m, f); l != nil && l.Kind == yaml.SequenceNode {
			l.Content = slices.DeleteFunc(l.Content, func(e *yaml.Node) bool { return slices.Contains(vals, e.Value) })
		}
	}
	if hasRetain {
		for i := 0; i+1 < len(m.Content); {
			if slices.Contains(retain, m.Content[i].Value) {
				i += 2
				continue
			}
			m.Content = slices.Delete(m.Content, i, i+2)
		}
	}
}

// listPatch returns the value of a list-level {$patch: VALUE} item in the
// list n, or "".
func listPatch(n *yaml.Node) string {
	if n.Kind != yaml.SequenceNode {
		return ""
	}
	if i := slices.IndexFunc(n.Content, isListPatch); i >= 0 {
		return lookup(n.Content[i], patchKey).Value
	}
	return ""
}

// isListPatch reports whether a list item is a {$patch: VALUE} directive.
func isListPatch(e *yaml.Node) bool {
	return len(e.Content) == 2 && lookup(e, patchKey) != nil
}

// scalars returns the values of the scalars in a list node.
func scalars(n *yaml.Node) []string {
	var s []string
	for _, c := range n.Content {
		s = append(s, c.Value)
	}
	return s
}

// alignPatch walks the patch p alongside the object n (mappings by key,
// lists of named items by name) to work around two limits of merge2. A
// scalar merged into the object replaces the object's node with the patch's,
// so the patch scalar takes the object's line comment when it has none. And
// the schema keys ports by port number and protocol while merge2 treats a
// missing protocol as different from TCP, which the API server defaults it
// to: a patch naming only containerPort would add a duplicate port or be
// lost, so each patch port takes the protocol field of the port it means.
func alignPatch(n, p *yaml.Node) {
	switch {
	case n == nil || p == nil || n.Kind != p.Kind:
	case p.Kind == yaml.ScalarNode:
		keepComment(n, p)
	case p.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(p.Content); i += 2 {
			k, pv := p.Content[i].Value, p.Content[i+1]
			if nv := lookup(n, k); k == "ports" && nv != nil && nv.Kind == yaml.SequenceNode && pv.Kind == yaml.SequenceNode {
				alignProtocols(nv, pv)
			} else {
				alignPatch(nv, pv)
			}
		}
	case p.Kind == yaml.SequenceNode:
		for _, pi := range p.Content {
			name := lookup(pi, "name")
			if name == nil {
				continue
			}
			for _, ni := range n.Content {
				if nn := lookup(ni, "name"); nn != nil && nn.Value == name.Value {
					alignPatch(ni, pi)
					break
				}
			}
		}
	}
}

// alignProtocols sets the protocol of each port in the patch list p the way
// the matching port of the object list n has it (set to the same value, or
// absent).
func alignProtocols(n, p *yaml.Node) {
	for _, pp := range p.Content {
		key, num := portNumber(pp)
		if key == "" {
			continue
		}
		for _, np := range n.Content {
			if k, v := portNumber(np); k != key || v != num || protocol(np) != protocol(pp) {
				continue
			}
			if np := lookup(np, "protocol"); np != nil {
				setField(pp, "protocol", stringNode(np.Value))
			} else {
				deleteField(pp, "protocol")
			}
			break
		}
	}
}

// portNumber returns which of containerPort and port a port item uses, and
// its value.
func portNumber(n *yaml.Node) (key, value string) {
	for _, k := range []string{"containerPort", "port"} {
		if v := lookup(n, k); v != nil {
			return k, v.Value
		}
	}
	return "", ""
}

// protocol returns a port's protocol, TCP when unset.
func protocol(n *yaml.Node) string {
	if v := lookup(n, "protocol"); v != nil && v.Value != "" {
		return v.Value
	}
	return "TCP"
}
