package patches

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Object is one Kubernetes object read from a manifest file, with the place it
// came from so that errors can point at it.
type Object struct {
	// Node is the object. Apply replaces it with the patched node.
	Node *yaml.RNode
	// File is the file name given to Split.
	File string
	// Doc is the 1-based number of the YAML document in File.
	Doc int
	// Item is the 1-based index of the object in the items of a List
	// document, or 0 when the document is the object itself.
	Item int

	// doc is the document the object was read from; nil for objects made
	// otherwise, which Wrap always serializes.
	doc *document
	// changed is set by Apply when a patch changed the object.
	changed bool
}

// document is one YAML document of a manifest file, as Split read it.
type document struct {
	// raw is the document's text exactly as upstream wrote it.
	raw []byte
	// listKind is the kind of a List document ("" for a single object);
	// items is how many objects the document holds.
	listKind string
	items    int
}

// Kind returns the object's kind.
func (o *Object) Kind() string { return o.Node.GetKind() }

// Name returns the object's metadata.name ("" when it has none).
func (o *Object) Name() string { return o.Node.GetName() }

// Origin says where the object came from: "FILE document N" or
// "FILE document N item M".
func (o *Object) Origin() string {
	if o.Item > 0 {
		return fmt.Sprintf("%s document %d item %d", o.File, o.Doc, o.Item)
	}
	return fmt.Sprintf("%s document %d", o.File, o.Doc)
}

// String returns "KIND/NAME (ORIGIN)" for messages.
func (o *Object) String() string {
	return fmt.Sprintf("%s/%s (%s)", o.Kind(), o.Name(), o.Origin())
}

// Bytes serializes the object as one YAML document: two-space indentation,
// keys and comments in the order they have in Node. The same node always gives
// the same bytes.
func (o *Object) Bytes() ([]byte, error) {
	s, err := o.Node.String()
	if err != nil {
		return nil, fmt.Errorf("%s: encode: %w", o, err)
	}
	return []byte(s), nil
}

// matches reports whether o has the kind and name; an empty field matches any.
func (o *Object) matches(kind, name string) bool {
	return (kind == "" || o.Kind() == kind) && (name == "" || o.Name() == name)
}

// selector formats a kind/name pair the way a recipe writes it.
func selector(kind, name string) string {
	var f []string
	if kind != "" {
		f = append(f, "kind: "+kind)
	}
	if name != "" {
		f = append(f, "name: "+name)
	}
	return "{" + strings.Join(f, ", ") + "}"
}

// present describes the objects a selector could have meant, for errors
// about selectors that match nothing: the names of that kind, else the kinds
// present, or for a name-only selector every KIND/NAME.
func present(objs []*Object, kind string) string {
	if len(objs) == 0 {
		return "there are no objects"
	}
	var names, kinds, all []string
	for _, o := range objs {
		kinds = append(kinds, o.Kind())
		all = append(all, o.Kind()+"/"+o.Name())
		if o.Kind() == kind {
			names = append(names, o.Name())
		}
	}
	switch {
	case kind == "":
		return "objects present: " + list(all)
	case len(names) > 0:
		return fmt.Sprintf("%s objects present: %s", kind, list(names))
	}
	return fmt.Sprintf("no %s object exists; kinds present: %s", kind, list(kinds))
}

// list sorts and deduplicates s and joins at most 20 entries.
func list(s []string) string {
	s = slices.Clone(s)
	sort.Strings(s)
	s = slices.Compact(s)
	const limit = 20
	if len(s) > limit {
		return fmt.Sprintf("%s and %d more", strings.Join(s[:limit], ", "), len(s)-limit)
	}
	return strings.Join(s, ", ")
}

// nodeFromValue turns a JSON-compatible Go value (as decoded from a recipe)
// into a block-style YAML node. Map keys come out sorted.
func nodeFromValue(v any) (*yaml.Node, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return nodeFromJSON(js)
}

// nodeFromJSON parses one JSON value into a block-style YAML node, keeping
// the key order of the text.
func nodeFromJSON(js []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(js, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) != 1 {
		return nil, fmt.Errorf("expected one JSON value, got %d", len(doc.Content))
	}
	blockStyle(doc.Content[0])
	return doc.Content[0], nil
}

// blockStyle clears the flow and quoting styles JSON text brings, so that the
// node is written as ordinary block YAML. The encoder quotes strings that
// YAML 1.2 would read as another type; strings that only YAML 1.1 readers
// (such as sigs.k8s.io/yaml, which Kubernetes and Helm use) would misread
// stay double-quoted.
func blockStyle(n *yaml.Node) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != yaml.NodeTagString || !yaml11Special(n.Value) {
		n.Style = 0
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// sexagesimal matches YAML 1.1 base 60 numbers such as 1:20.
var sexagesimal = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$`)

// yaml11Special reports whether a plain scalar s means something other than
// a string in YAML 1.1 but not in YAML 1.2.
func yaml11Special(s string) bool {
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "=":
		return true
	}
	return sexagesimal.MatchString(s)
}

// isNull reports whether n is a YAML null.
func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == yaml.NodeTagNull)
}

// field returns the index of key's key node in mapping m, or -1.
func field(m *yaml.Node, key string) int {
	if m == nil || m.Kind != yaml.MappingNode {
		return -1
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// lookup returns the value of key in mapping m, or nil.
func lookup(m *yaml.Node, key string) *yaml.Node {
	if i := field(m, key); i >= 0 {
		return m.Content[i+1]
	}
	return nil
}

// setField sets key in mapping m to v, appending the key when it is new.
func setField(m *yaml.Node, key string, v *yaml.Node) {
	if i := field(m, key); i >= 0 {
		keepComment(m.Content[i+1], v)
		m.Content[i+1] = v
		return
	}
	if len(m.Content) == 0 {
		m.Style &^= yaml.FlowStyle // {} grows into a block mapping
	}
	m.Content = append(m.Content, stringNode(key), v)
}

// stringNode returns a string scalar, quoted only when needed.
func stringNode(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: s, Style: yaml.DoubleQuotedStyle}
	blockStyle(n)
	return n
}

// deleteField removes key from mapping m and reports whether it was there.
func deleteField(m *yaml.Node, key string) bool {
	i := field(m, key)
	if i < 0 {
		return false
	}
	m.Content = slices.Delete(m.Content, i, i+2)
	return true
}

// keepComment carries the line comment of a replaced node over to its
// replacement when the replacement has none of its own.
func keepComment(old, repl *yaml.Node) {
	if old != nil && repl != nil && repl.LineComment == "" {
		repl.LineComment = old.LineComment
	}
}
