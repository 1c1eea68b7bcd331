package yamlscan

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	yaml3 "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// MaxSlow caps the documents decoded with sigs.k8s.io/yaml, whose memory
// use is many times the input's. Larger documents must stay within what
// the fast reader handles; an unknown field's value beyond it is checked
// on its own (see Reader.SkipValue), and must itself be at most MaxSlow.
const MaxSlow = 16 << 20

// DecodeStrict decodes one YAML document strictly with sigs.k8s.io/yaml
// (unknown fields are errors) after CheckPlain; what names the document
// in errors.
func DecodeStrict(b []byte, what string, v any) error {
	if err := CheckPlain(b, what); err != nil {
		return err
	}
	if err := sigsyaml.UnmarshalStrict(b, v); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// DecodeLoose decodes b with sigs.k8s.io/yaml, ignoring unknown fields.
// Only for documents of at most MaxSlow bytes that passed CheckPlain.
func DecodeLoose(b []byte, v any) error { return sigsyaml.Unmarshal(b, v) }

// CheckPlain refuses what no kbuild format needs and what makes YAML
// expensive or ambiguous to read: anchors and aliases (alias bombs), and
// more than one document.
func CheckPlain(b []byte, what string) error {
	dec := yaml3.NewDecoder(bytes.NewReader(b))
	for n := 0; ; n++ {
		var doc yaml3.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if n > 0 {
			return fmt.Errorf("%s: line %d: a second YAML document; the file must hold one", what, doc.Line)
		}
		if err := noAliases(&doc, what); err != nil {
			return err
		}
	}
}

func noAliases(n *yaml3.Node, what string) error {
	if n.Kind == yaml3.AliasNode || n.Anchor != "" {
		return fmt.Errorf("%s: line %d: YAML anchors and aliases are not allowed", what, n.Line)
	}
	for _, c := range n.Content {
		if err := noAliases(c, what); err != nil {
			return err
		}
	}
	return nil
}

// NoDuplicateKeys refuses a mapping below n that has a key twice:
// sigs.k8s.io/yaml takes the last of two equal keys, another reader may
// take the first, so such a file means two things. Lines are offset by
// line-1 (n parsed from a part that starts on that line); what names the
// document.
func NoDuplicateKeys(n *yaml3.Node, what string, line int) error {
	if n.Kind == yaml3.MappingNode {
		seen := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if first, dup := seen[k.Value]; dup {
				return fmt.Errorf("%s: line %d: duplicate key %q (first on line %d)", what, k.Line+line-1, k.Value, first+line-1)
			}
			seen[k.Value] = k.Line
		}
	}
	for _, c := range n.Content {
		if err := NoDuplicateKeys(c, what, line); err != nil {
			return err
		}
	}
	return nil
}
