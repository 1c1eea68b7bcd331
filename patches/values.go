package patches

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"kbuild.dev/kbuild/internal/yamlbound"
	"kbuild.dev/kbuild/recipe"
)

// MergeValues deep-merges overrides (a recipe's values) over a chart's
// values.yaml and returns the new file. Maps merge per key, lists and scalars
// replace, and a null override removes the key. The chart's keys keep their
// order and comments; new keys are appended in sorted order. The output is
// re-indented with two spaces. An empty valuesYAML counts as {}; with no
// overrides valuesYAML is returned unchanged.
func MergeValues(valuesYAML []byte, overrides map[string]any) ([]byte, error) {
	if len(overrides) == 0 {
		return bytes.Clone(valuesYAML), nil
	}
	if recipe.CountValueKeys(overrides, recipe.MaxValueKeys) > recipe.MaxValueKeys {
		return nil, fmt.Errorf("values: more than %d keys and list items, the most a recipe may set", recipe.MaxValueKeys)
	}
	data := normalize(valuesYAML)
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("values.yaml: %w", err)
	}
	if err := yamlbound.Check(&doc, len(data)); err != nil {
		return nil, fmt.Errorf("values.yaml: %w", err)
	}
	var head []byte // a file of only comments: keep them above the values
	if doc.Kind == 0 {
		doc.Kind = yaml.DocumentNode
		if head = bytes.TrimSpace(data); len(head) > 0 {
			head = append(head, '\n')
		}
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		doc.Content = []*yaml.Node{{Kind: yaml.MappingNode, Tag: kyaml.NodeTagMap}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("values.yaml: top level is a %s, expected a mapping of values", kindName(root))
	}
	p, err := nodeFromValue(overrides)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	mergeNode(root, p)
	out, err := kyaml.String(&doc)
	if err != nil {
		return nil, fmt.Errorf("values.yaml: encode: %w", err)
	}
	return append(head, out...), nil
}
