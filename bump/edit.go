package bump

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// scalarEdit replaces one scalar's text on its line.
type scalarEdit struct {
	node  *yaml.Node
	value string
}

// applyEdits rewrites the scalars edits name in data, each in the style
// it is written in (plain, single- or double-quoted), leaving every other
// byte as it was. A scalar written over several lines, or whose text is
// not where the parser says, is refused: the caller names the field.
func applyEdits(data []byte, edits []scalarEdit) ([]byte, error) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	sort.SliceStable(edits, func(i, j int) bool {
		a, b := edits[i].node, edits[j].node
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column > b.Column // right to left within a line
	})
	for i, e := range edits {
		if i > 0 && edits[i-1].node == e.node {
			continue
		}
		n := e.node
		if n.Line < 1 || n.Line > len(lines) {
			return nil, fmt.Errorf("line %d: no such line", n.Line)
		}
		line := lines[n.Line-1]
		start := n.Column - 1
		if start < 0 || start > len(line) {
			return nil, fmt.Errorf("line %d: column %d is past the line", n.Line, n.Column)
		}
		end, err := scalarEnd(line, start, n)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		var out []byte
		out = append(out, line[:start]...)
		out = append(out, render(e.value, n.Style)...)
		out = append(out, line[end:]...)
		lines[n.Line-1] = out
	}
	return bytes.Join(lines, nil), nil
}

// scalarEnd returns where the text of scalar n, starting at start of
// line, ends.
func scalarEnd(line []byte, start int, n *yaml.Node) (int, error) {
	rest := line[start:]
	switch n.Style {
	case yaml.DoubleQuotedStyle:
		if len(rest) == 0 || rest[0] != '"' {
			return 0, fmt.Errorf("expected a double-quoted %q here", n.Value)
		}
		for i := 1; i < len(rest); i++ {
			switch rest[i] {
			case '\\':
				i++
			case '"':
				return start + i + 1, nil
			}
		}
	case yaml.SingleQuotedStyle:
		if len(rest) == 0 || rest[0] != '\'' {
			return 0, fmt.Errorf("expected a single-quoted %q here", n.Value)
		}
		for i := 1; i < len(rest); i++ {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					i++
					continue
				}
				return start + i + 1, nil
			}
		}
	case 0:
		if bytes.HasPrefix(rest, []byte(n.Value)) {
			return start + len(n.Value), nil
		}
		return 0, fmt.Errorf("expected %q here; edit it by hand", n.Value)
	default:
		return 0, fmt.Errorf("%q is a block scalar; write it on one line", n.Value)
	}
	return 0, fmt.Errorf("%q continues on the next line; write it on one line", n.Value)
}

// render writes value in style; a plain value that YAML would read as
// something else is double-quoted.
func render(value string, style yaml.Style) string {
	switch style {
	case yaml.SingleQuotedStyle:
		return "'" + strings.ReplaceAll(value, "'", "''") + "'"
	case yaml.DoubleQuotedStyle:
		return quote(value)
	}
	if value == "" || strings.ContainsAny(value[:1], "!&*{}[]|>'\"%@`#,?:-") || strings.Contains(value, ": ") || strings.Contains(value, " #") {
		return quote(value)
	}
	return value
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// scalars calls fn for every scalar under n, with the mapping it is a
// value of (nil for list items).
func scalars(n *yaml.Node, parent *yaml.Node, key string, fn func(n, parent *yaml.Node, key string)) {
	switch n.Kind {
	case yaml.ScalarNode:
		fn(n, parent, key)
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			scalars(n.Content[i+1], n, n.Content[i].Value, fn)
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			scalars(c, nil, "", fn)
		}
	}
}
