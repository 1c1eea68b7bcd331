package index

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"

	yaml3 "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// maxSlowYAML caps the documents decoded with sigs.k8s.io/yaml, whose
// memory use is many times the input's. Larger documents must stay within
// what the fast reader handles, which is everything kbuild writes.
const maxSlowYAML = 16 << 20

// decodeYAML decodes b into v (a pointer) with the fast reader fast, or,
// when it gives up, strictly with sigs.k8s.io/yaml after refusing anchors,
// aliases and several documents.
func decodeYAML(b []byte, what string, v any, fast func(r *yreader) error) error {
	return decodeYAMLOf(b, false, nil, what, v, fast)
}

// decodeYAMLOf is decodeYAML; with share, the fast reader's strings use b
// itself, which must then never be modified; its values come from slab
// (new slabs when nil).
func decodeYAMLOf(b []byte, share bool, slab *slabs, what string, v any, fast func(r *yreader) error) error {
	r, err := newYReaderOf(b, share, slab)
	if err == nil {
		err = fast(r)
	}
	if err == nil {
		return nil
	}
	var bail *yamlBail
	if !errors.As(err, &bail) {
		return err
	}
	if len(b) > maxSlowYAML {
		return fmt.Errorf("%s: %v (YAML beyond what kbuild writes is read only in files up to %d MiB)", what, bail, maxSlowYAML>>20)
	}
	rv := reflect.ValueOf(v).Elem()
	rv.SetZero()
	if err := slowDecode(b, what, v); err != nil {
		rv.SetZero()
		return err
	}
	return nil
}

// slowDecode decodes one YAML document strictly with sigs.k8s.io/yaml.
func slowDecode(b []byte, what string, v any) error {
	if err := checkPlainYAML(b, what); err != nil {
		return err
	}
	if err := sigsyaml.UnmarshalStrict(b, v); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// checkPlainYAML refuses what no kbuild format needs and what makes YAML
// expensive or ambiguous to read: anchors and aliases (alias bombs), and
// more than one document.
func checkPlainYAML(b []byte, what string) error {
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

// unmarshalLoose decodes b with sigs.k8s.io/yaml, ignoring unknown fields.
// Only for small documents that passed checkPlainYAML.
func unmarshalLoose(b []byte, v any) error { return sigsyaml.Unmarshal(b, v) }
