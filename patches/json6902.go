package patches

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"kbuild.dev/kbuild/recipe"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// jsonPatch applies RFC 6902 operations to the object root in order. It works
// on the YAML nodes directly, so untouched keys keep their order and comments.
// On error root may be half patched; callers patch a copy.
func jsonPatch(root *yaml.Node, ops []recipe.JSONPatchOp) error {
	for i, op := range ops {
		if err := jsonOp(root, op); err != nil {
			return fmt.Errorf("op %d (%s %s): %w", i, op.Op, op.Path, err)
		}
	}
	return nil
}

// jsonOp applies one operation.
func jsonOp(root *yaml.Node, op recipe.JSONPatchOp) error {
	path, err := pointer(op.Path)
	if err != nil {
		return err
	}
	var value *yaml.Node
	switch op.Op {
	case "add", "replace", "test":
		if len(op.Value) == 0 {
			return fmt.Errorf("%s needs a value", op.Op)
		}
		if value, err = nodeFromJSON(op.Value); err != nil {
			return fmt.Errorf("value: %w", err)
		}
	case "move", "copy":
		if op.From == "" {
			return fmt.Errorf("%s needs from", op.Op)
		}
	case "remove":
	default:
		return fmt.Errorf("unknown op %q; use add, remove, replace, move, copy or test", op.Op)
	}
	if len(path) == 0 && op.Op != "test" {
		return errors.New("cannot change the whole object; point at a field below it")
	}
	switch op.Op {
	case "add":
		return put(root, path, value, true)
	case "remove":
		_, err := remove(root, path)
		return err
	case "replace":
		if _, err := get(root, path); err != nil {
			return err
		}
		return put(root, path, value, false)
	case "test":
		got, err := get(root, path)
		if err != nil {
			return err
		}
		if !equal(got, value) {
			return fmt.Errorf("test failed: value is %s, expected %s", brief(got), brief(value))
		}
		return nil
	}
	from, err := pointer(op.From)
	if err != nil {
		return fmt.Errorf("from: %w", err)
	}
	if op.Op == "move" {
		if op.From == op.Path {
			return nil
		}
		if strings.HasPrefix(op.Path, op.From+"/") {
			return fmt.Errorf("cannot move %s into itself", op.From)
		}
		v, err := remove(root, from)
		if err != nil {
			return fmt.Errorf("from: %w", err)
		}
		return put(root, path, v, true)
	}
	v, err := get(root, from)
	if err != nil {
		return fmt.Errorf("from: %w", err)
	}
	return put(root, path, yaml.CopyYNode(v), true)
}

// pointer splits an RFC 6901 JSON pointer into unescaped reference tokens.
func pointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("path %q must start with /", p)
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		if strings.Count(t, "~") != strings.Count(t, "~0")+strings.Count(t, "~1") {
			return nil, fmt.Errorf("path %q: ~ must be followed by 0 or 1", p)
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

// get returns the node at path.
func get(n *yaml.Node, path []string) (*yaml.Node, error) {
	for i, tok := range path {
		switch n.Kind {
		case yaml.MappingNode:
			v := lookup(n, tok)
			if v == nil {
				return nil, fmt.Errorf("%s does not exist", render(path[:i+1]))
			}
			n = v
		case yaml.SequenceNode:
			j, err := index(tok, len(n.Content)-1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", render(path[:i+1]), err)
			}
			n = n.Content[j]
		default:
			return nil, fmt.Errorf("%s is a scalar, not a map or list", render(path[:i]))
		}
	}
	return n, nil
}

// put sets the value at path: a map member is added or replaced; a list item
// is inserted at its index ("-" appends) when insert is set, else overwritten.
func put(root *yaml.Node, path []string, v *yaml.Node, insert bool) error {
	parent, err := get(root, path[:len(path)-1])
	if err != nil {
		return err
	}
	last := path[len(path)-1]
	switch parent.Kind {
	case yaml.MappingNode:
		setField(parent, last, v)
		return nil
	case yaml.SequenceNode:
		if !insert {
			j, err := index(last, len(parent.Content)-1)
			if err != nil {
				return fmt.Errorf("%s: %w", render(path), err)
			}
			keepComment(parent.Content[j], v)
			parent.Content[j] = v
			return nil
		}
		j := len(parent.Content)
		if last != "-" {
			if j, err = index(last, len(parent.Content)); err != nil {
				return fmt.Errorf("%s: %w", render(path), err)
			}
		}
		parent.Content = slices.Insert(parent.Content, j, v)
		return nil
	}
	return fmt.Errorf("%s is a scalar, not a map or list", render(path[:len(path)-1]))
}

// remove deletes the value at path and returns it.
func remove(root *yaml.Node, path []string) (*yaml.Node, error) {
	v, err := get(root, path)
	if err != nil {
		return nil, err
	}
	parent, _ := get(root, path[:len(path)-1])
	last := path[len(path)-1]
	if parent.Kind == yaml.MappingNode {
		deleteField(parent, last)
	} else {
		j, _ := index(last, len(parent.Content)-1)
		parent.Content = slices.Delete(parent.Content, j, j+1)
	}
	return v, nil
}

// index parses a list index token that must be at most max.
func index(tok string, max int) (int, error) {
	j, err := strconv.Atoi(tok)
	if err != nil || j < 0 || (len(tok) > 1 && tok[0] == '0') || tok[0] == '+' {
		return 0, fmt.Errorf("%q is not a list index", tok)
	}
	if j > max {
		return 0, fmt.Errorf("index %d is out of range (the list has %d items)", j, max+1)
	}
	return j, nil
}

// render joins path tokens back into a pointer for messages.
func render(path []string) string {
	var b strings.Builder
	for _, t := range path {
		b.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	if b.Len() == 0 {
		return "the object"
	}
	return b.String()
}

// equal compares two nodes as JSON values (so 1 and 1.0 are equal).
func equal(a, b *yaml.Node) bool {
	return reflect.DeepEqual(asJSON(a), asJSON(b))
}

// asJSON decodes a node into the value encoding/json would give it.
func asJSON(n *yaml.Node) any {
	var v any
	if err := n.Decode(&v); err != nil {
		return err.Error()
	}
	js, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	var out any
	_ = json.Unmarshal(js, &out)
	return out
}

// brief shows a node as short flow YAML for messages.
func brief(n *yaml.Node) string {
	s, err := yaml.String(n, yaml.Flow, yaml.Trim)
	if err != nil {
		return "?"
	}
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
