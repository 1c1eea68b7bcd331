package recipe

import (
	"bytes"
	"errors"
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// ImageLine is one change RewriteImages makes to spec.package.images.
type ImageLine struct {
	// Old is the entry to replace, as written; "" appends New.
	Old string
	// New is the reference to write.
	New string
	// Comment is written after an appended entry ("" for none).
	Comment string
}

// RewriteImages returns the recipe file data with the entries of its
// spec.package.images block replaced and appended as lines says. Only the
// lines of changed entries are rewritten and new ones inserted after the
// last entry with the same indentation, so every other line, comments
// included, stays as it was. It refuses a recipe without a block-style
// images list: the caller prints the block to paste instead.
func RewriteImages(data []byte, lines []ImageLine) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("empty recipe")
	}
	images := MappingPath(doc.Content[0], "spec", "package", "images")
	if images == nil || images.Kind != yaml.SequenceNode || images.Style&yaml.FlowStyle != 0 || len(images.Content) == 0 {
		return nil, errors.New("spec.package.images is not a list written one entry a line; paste the printed block instead")
	}
	text := bytes.SplitAfter(data, []byte("\n"))
	byValue := map[string]*yaml.Node{}
	for _, it := range images.Content {
		if it.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: spec.package.images entry is not a string", it.Line)
		}
		byValue[it.Value] = it
	}
	last := images.Content[len(images.Content)-1]
	prefix := string(text[last.Line-1][:last.Column-1])
	var added []string
	for _, l := range lines {
		if l.Old == "" {
			s := prefix + l.New
			if l.Comment != "" {
				s += "  # " + l.Comment
			}
			added = append(added, s+"\n")
			continue
		}
		it := byValue[l.Old]
		if it == nil {
			return nil, fmt.Errorf("spec.package.images has no entry %s", l.Old)
		}
		if l.Old == l.New {
			continue
		}
		line := text[it.Line-1]
		end := bytes.TrimRight(line, "\r\n")
		s := string(line[:it.Column-1]) + l.New
		if it.LineComment != "" {
			s += " " + it.LineComment
		}
		text[it.Line-1] = []byte(s + string(line[len(end):]))
	}
	var out bytes.Buffer
	for i, l := range text {
		out.Write(l)
		if i == last.Line-1 {
			if !bytes.HasSuffix(l, []byte("\n")) && len(added) > 0 {
				out.WriteString("\n")
			}
			for _, a := range added {
				out.WriteString(a)
			}
		}
	}
	return out.Bytes(), nil
}

// MappingPath follows keys through nested YAML mappings from n: the node
// at that path, or nil where a key is missing or a node on the way is not
// a mapping. The in-place edits of recipe.yaml (images --write, bump) find
// what they change with it.
func MappingPath(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}
