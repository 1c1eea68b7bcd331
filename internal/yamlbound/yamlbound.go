package yamlbound

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"kbuild.dev/kbuild/internal/fault"
)

// MaxDepth is the deepest nesting Check accepts. Real recipes and chart
// indexes nest fewer than ten levels.
const MaxDepth = 64

// slack is added to the byte budget so that small documents with many
// empty values are never refused.
const slack = 10_000

// ErrExpansion is wrapped by every error Check returns.
var ErrExpansion = fault.New(fault.Refused, "YAML expands without bound")

// Check walks doc, following aliases, and returns an error wrapping
// ErrExpansion when the walk costs more than 2*size+10000 (size is the
// length of the parsed input in bytes) or nests deeper than MaxDepth. A node
// costs one plus the length of its value, so a few aliases of one long
// string are refused as surely as many aliases of a short one. Each node of
// an alias-free document and its value come from its own bytes of input, so
// only aliases can exceed the budget.
func Check(doc *yaml.Node, size int) error {
	budget := 2*size + slack
	return check(doc, 0, &budget)
}

func check(n *yaml.Node, depth int, budget *int) error {
	if depth > MaxDepth {
		return fmt.Errorf("line %d: nested deeper than %d levels: %w", n.Line, MaxDepth, ErrExpansion)
	}
	*budget -= 1 + len(n.Value)
	if *budget < 0 {
		return fmt.Errorf("line %d: aliases expand the document far beyond its size: %w", n.Line, ErrExpansion)
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return fmt.Errorf("line %d: alias without anchor: %w", n.Line, ErrExpansion)
		}
		return check(n.Alias, depth+1, budget)
	}
	for _, c := range n.Content {
		if err := check(c, depth+1, budget); err != nil {
			return err
		}
	}
	return nil
}
