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
// leading "---" and a comment after it are fine; a "..." line ends a
// document) or a JSON document. A byte order mark is dropped; CRLF line ends
// are read as LF. Empty documents and documents holding only comments are
// dropped. A List (kind List or any kind ending in List, with items) yields
// its items. Every other document must be a mapping with a kind. Errors name
// the file, the document number and, where the parser knows it, the line.
//
// Each document is parsed on its own, as Helm and the Kubernetes API read a
// stream: an alias to an anchor of another document is an error, where a
// single YAML parser would accept it and Helm would then fail with "unknown
// anchor". Each object remembers the exact text of its document, so that
// Wrap can store what no patch changed byte for byte. The items of a List
// get their aliases resolved, so that each item stands on its own when it
// has to be written alone.
func Split(file string, data []byte) ([]*Object, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if isJSON(file, data) {
		return splitJSON(file, data)
	}
	var objs []*Object
	doc := 0
	for _, seg := range segments(data) {
		var n yaml.Node
		dec := yaml.NewDecoder(bytes.NewReader(seg.parse()))
		err := dec.Decode(&n)
		empty := errors.Is(err, io.EOF) || (err == nil && (len(n.Content) == 0 || isNull(n.Content[0])))
		if empty && seg.bare {
			continue // text before the first "---" or after "...": no document
		}
		doc++
		if empty {
			continue // empty or only comments
		}
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w%s", file, doc, err, anchorHint(err))
		}
		if err := yamlbound.Check(&n, len(data)); err != nil {
			return nil, fmt.Errorf("%s document %d: %w", file, doc, err)
		}
		found, err := objects(file, doc, n.Content[0], &document{raw: seg.raw})
		if err != nil {
			return nil, err
		}
		objs = append(objs, found...)
	}
	return objs, nil
}

// anchorHint explains an alias whose anchor the document does not define;
// other parse errors get the general advice.
func anchorHint(err error) string {
	if strings.Contains(err.Error(), "unknown anchor") {
		return "; an alias can only refer to an anchor of its own document (Helm and the Kubernetes API read each document alone): repeat the anchored text in this document"
	}
	return "; fix the YAML (a Helm template is not a plain manifest)"
}

// splitJSON reads a JSON manifest: one document, kept as written.
func splitJSON(file string, data []byte) ([]*Object, error) {
	var n yaml.Node
	err := yaml.NewDecoder(bytes.NewReader(normalize(data))).Decode(&n)
	if errors.Is(err, io.EOF) || (err == nil && (len(n.Content) == 0 || isNull(n.Content[0]))) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s document 1: %w; fix the JSON", file, err)
	}
	root := n.Content[0]
	blockStyle(root)
	return objects(file, 1, root, &document{raw: data})
}

// segment is the text of one YAML document of a stream.
type segment struct {
	// raw is the document's text exactly as written, without the "---" line
	// that opens it unless that line carries more (a comment, or "--- |").
	raw []byte
	// line is the line number of raw's first line in the file.
	line int
	// bare says no "---" line opened the segment: it is the text before the
	// first one, or after a "..." line.
	bare bool
}

// parse returns the text to give the YAML parser: raw with CRLF read as LF,
// after line-1 empty lines, so that the parser's line numbers are the file's.
func (s segment) parse() []byte {
	return append(bytes.Repeat([]byte("\n"), s.line-1), normalize(s.raw)...)
}

// segments cuts a YAML stream at its document markers: lines that start
// with "---" or "..." followed by a space, a tab or the end of the line. The
// YAML spec forbids such a line inside any scalar, so the cut is exact
// without parsing.
func segments(data []byte) []segment {
	var segs []segment
	cur := segment{line: 1, bare: true}
	start, line := 0, 1
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		text := bytes.TrimRight(data[off:next], "\r\n")
		if m, rest := marker(text); m != "" {
			cur.raw = data[start:off]
			segs = append(segs, cur)
			cur = segment{line: line + 1, bare: m == "..."}
			start = next
			if m == "---" && strings.TrimSpace(rest) != "" {
				// "--- |" or "--- # comment": the line belongs to the document.
				cur.line, start = line, off
			}
		}
		off = next
		line++
	}
	cur.raw = data[start:]
	return append(segs, cur)
}

// marker returns "---" or "..." when line is a document marker, and the text
// after it.
func marker(line []byte) (string, string) {
	for _, m := range []string{"---", "..."} {
		if rest, ok := bytes.CutPrefix(line, []byte(m)); ok && (len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t') {
			return m, string(rest)
		}
	}
	return "", ""
}

// normalize turns CRLF into LF.
func normalize(data []byte) []byte {
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
func objects(file string, doc int, root *yaml.Node, d *document) ([]*Object, error) {
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
		d.items = 1
		return []*Object{{Node: yaml.NewRNode(root), File: file, Doc: doc, doc: d}}, nil
	}
	if isNull(items) {
		return nil, nil
	}
	if items.Kind == yaml.AliasNode {
		items = items.Alias
	}
	if items.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: %s items is a %s, expected a list of objects", where(items), kind.Value, kindName(items))
	}
	d.listKind, d.items = kind.Value, len(items.Content)
	var objs []*Object
	for i, it := range items.Content {
		it, err := resolveAliases(it)
		if err != nil {
			return nil, fmt.Errorf("%s: %s item %d: %w", where(items.Content[i]), kind.Value, i+1, err)
		}
		if it.Kind != yaml.MappingNode || lookup(it, "kind") == nil || lookup(it, "kind").Value == "" {
			return nil, fmt.Errorf("%s: %s item %d is not a Kubernetes object with a kind", where(it), kind.Value, i+1)
		}
		objs = append(objs, &Object{Node: yaml.NewRNode(it), File: file, Doc: doc, Item: i + 1, doc: d})
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
