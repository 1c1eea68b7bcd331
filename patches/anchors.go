package patches

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// maxResolvedNodes bounds the nodes resolveAliases may create, so that a
// document whose aliases nest into billions of nodes is refused rather than
// exhausting memory. The largest upstream CRDs hold about a hundred thousand.
const maxResolvedNodes = 1 << 20

// resolveAliases returns a deep copy of n in which every alias is replaced
// by a copy of the node it refers to, no node carries an anchor, and every
// YAML merge key ("<<: *base") is written out as the keys it merges (keys
// of the mapping itself win, then earlier merged mappings over later ones).
// The copy means what n means to a YAML 1.1 reader such as Kubernetes, but
// each of its nodes appears once, so a patch changes the node it names and
// nothing else.
func resolveAliases(n *yaml.Node) (*yaml.Node, error) {
	budget := maxResolvedNodes
	return resolve(n, &budget, 0)
}

func resolve(n *yaml.Node, budget *int, depth int) (*yaml.Node, error) {
	if *budget--; *budget < 0 {
		return nil, fmt.Errorf("aliases expand to more than %d nodes; refusing a document built to exhaust memory", maxResolvedNodes)
	}
	if depth > 1000 {
		return nil, fmt.Errorf("line %d: nesting deeper than 1000 levels (an alias that contains itself?)", n.Line)
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return nil, fmt.Errorf("line %d: alias *%s has no anchor", n.Line, n.Value)
		}
		c, err := resolve(n.Alias, budget, depth+1)
		if err != nil {
			return nil, err
		}
		c.LineComment, c.HeadComment, c.FootComment = n.LineComment, n.HeadComment, n.FootComment
		c.Line, c.Column = n.Line, n.Column
		return c, nil
	}
	c := *n
	c.Anchor = ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, e := range n.Content {
		r, err := resolve(e, budget, depth+1)
		if err != nil {
			return nil, err
		}
		c.Content[i] = r
	}
	if c.Kind == yaml.MappingNode {
		if err := flattenMerge(&c); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// flattenMerge writes the merge keys of mapping m out in place.
func flattenMerge(m *yaml.Node) error {
	has := false
	explicit := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if isMergeKey(m.Content[i]) {
			has = true
		} else {
			explicit[m.Content[i].Value] = true
		}
	}
	if !has {
		return nil
	}
	var out []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if !isMergeKey(k) {
			out = append(out, k, v)
			continue
		}
		sources := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			sources = v.Content
		}
		for _, s := range sources {
			if s.Kind != yaml.MappingNode {
				return fmt.Errorf("line %d: the merge key << takes a mapping or a list of mappings, got a %s", s.Line, kindName(s))
			}
			for j := 0; j+1 < len(s.Content); j += 2 {
				key := s.Content[j].Value
				if explicit[key] {
					continue
				}
				explicit[key] = true
				out = append(out, s.Content[j], s.Content[j+1])
			}
		}
	}
	m.Content = out
	return nil
}

// isMergeKey reports whether a mapping key is the YAML merge key "<<".
func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge"
}
