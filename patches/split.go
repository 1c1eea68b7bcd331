package patches

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"kbuild.dev/kbuild/internal/yamlbound"
)

// Split parses the Kubernetes manifests in data, read from file, into objects
// in document order.
//
// data is a YAML stream whose documents are separated by "---" lines (a
// leading "---" and a comment after it are fine) or a JSON document. CRLF line
// ends and a byte order mark are normalised first. Empty documents and
// documents holding only comments are dropped. A List (kind List or any kind
// ending in List, with items) yields its items. Every other document must be
// a mapping with a kind. Errors name the file, the document number and, where
// the parser knows it, the line.
func Split(file string, data []byte) ([]*Object, error) {
	data = normalize(data)
	fromJSON := isJSON(file, data)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var objs []*Object
	for doc := 1; ; doc++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w; fix the YAML (a Helm template is not a plain manifest)", file, doc, err)
		}
		if err := yamlbound.Check(&n, len(data)); err != nil {
			return nil, fmt.Errorf("%s document %d: %w", file, doc, err)
		}
		if len(n.Content) == 0 || isNull(n.Content[0]) {
			continue // empty or only comments
		}
		root := n.Content[0]
		if fromJSON {
			blockStyle(root)
		}
		found, err := objects(file, doc, root)
		if err != nil {
			return nil, err
		}
		objs = append(objs, found...)
	}
}

// normalize drops a UTF-8 byte order mark and turns CRLF into LF.
func normalize(data []byte) []byte {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	return bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
}

// isJSON reports whether the manifests are JSON rather than YAML.
func isJSON(file string, data []byte) bool {
	if strings.EqualFold(filepath.Ext(file), ".json") {
		return true
	}
	t := bytes.TrimSpace(data)
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// objects checks the root node of document doc and expands a List.
func objects(file string, doc int, root *yaml.Node) ([]*Object, error) {
	where := func(n *yaml.Node) string {
		return fmt.Sprintf("%s document %d (line %d)", file, doc, n.Line)
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: expected a Kubernetes object (a mapping with apiVersion and kind), got a %s", where(root), kindName(root))
	}
	kind := lookup(root, "kind")
	if kind == nil || kind.Value == "" {
		return nil, fmt.Errorf("%s: object has no kind; every manifest needs apiVersion and kind", where(root))
	}
	items := lookup(root, "items")
	if !strings.HasSuffix(kind.Value, "List") || items == nil {
		return []*Object{{Node: yaml.NewRNode(root), File: file, Doc: doc}}, nil
	}
	if isNull(items) {
		return nil, nil
	}
	if items.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: %s items is a %s, expected a list of objects", where(items), kind.Value, kindName(items))
	}
	var objs []*Object
	for i, it := range items.Content {
		if it.Kind != yaml.MappingNode || lookup(it, "kind") == nil || lookup(it, "kind").Value == "" {
			return nil, fmt.Errorf("%s: %s item %d is not a Kubernetes object with a kind", where(it), kind.Value, i+1)
		}
		objs = append(objs, &Object{Node: yaml.NewRNode(it), File: file, Doc: doc, Item: i + 1})
	}
	return objs, nil
}

// kindName names a node kind for messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar " + n.ShortTag()
	case yaml.AliasNode:
		return "alias"
	}
	return "mapping"
}
