package index

import (
	"bytes"
	"errors"
	"fmt"
	"sort"

	sigsyaml "sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/internal/yamlscan"
	"kbuild.dev/kbuild/spec"
)

// MaxRecordSize caps a build record that ParseRecord reads.
const MaxRecordSize = 16 << 20

// ErrNotRecord is returned by ParseRecord for a YAML document of another
// kind (a BuildInfo sidecar, a signature sidecar, …).
var ErrNotRecord = errors.New("not a build record")

// ParseRecord parses a build record strictly. A document whose kind is not
// PackageSource gives ErrNotRecord, so that a directory of build output can
// be read without knowing every kind in it.
func ParseRecord(b []byte) (*spec.PackageSource, error) { return parseRecord(b, false, nil) }

// parseRecord is ParseRecord; with share, the record's strings use b
// itself; its values come from slab (new slabs when nil).
func parseRecord(b []byte, share bool, slab *slabs) (*spec.PackageSource, error) {
	if len(b) > MaxRecordSize {
		return nil, fmt.Errorf("build record is %d bytes, more than the %d allowed", len(b), MaxRecordSize)
	}
	if k, ok := peekKind(b); ok && k != spec.RecordKind {
		return nil, fmt.Errorf("%w: kind %s", ErrNotRecord, k)
	}
	rec := &spec.PackageSource{}
	err := decodeYAMLOf(b, share, slab, "build record", rec, func(r *yreader) error { return readRecord(r, rec) })
	if err != nil {
		// Another kind of document may fail a record's strict decoding;
		// tell that apart from a broken record.
		var kind struct {
			Kind string `json:"kind"`
		}
		if len(b) <= MaxSlowYAML && yamlscan.CheckPlain(b, "") == nil && yamlscan.DecodeLoose(b, &kind) == nil && kind.Kind != spec.RecordKind {
			return nil, fmt.Errorf("%w: kind %q", ErrNotRecord, kind.Kind)
		}
		return nil, err
	}
	if rec.Kind != spec.RecordKind {
		return nil, fmt.Errorf("%w: kind %q", ErrNotRecord, rec.Kind)
	}
	return rec, nil
}

// peekKind finds the value of a top-level "kind:" line in a document whose
// column-0 lines are all simple "key:" lines, as sigs.k8s.io/yaml writes
// them. It reports false when it cannot tell. It reads b in place: only
// the kind it returns is copied.
func peekKind(b []byte) (string, bool) {
	var kind []byte
	found := false
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(line) == 0 || line[0] == ' ' || line[0] == '#' {
			continue
		}
		if string(line) == "---" && !found {
			continue
		}
		i := bytes.IndexByte(line, ':')
		if i <= 0 {
			return "", false
		}
		for _, c := range line[:i] {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				return "", false
			}
		}
		if string(line[:i]) != "kind" {
			continue
		}
		if i+1 < len(line) && line[i+1] != ' ' {
			return "", false
		}
		if found {
			return "", false
		}
		v := bytes.TrimSpace(line[i+1:])
		if len(v) == 0 || bytes.ContainsAny(v, "\"'#&*!|>%@`{}[],") || yamlscan.ResolvePlain(string(v)) != yamlscan.PlainStr {
			return "", false
		}
		kind, found = v, true
	}
	return string(kind), found
}

// MarshalRecord returns rec as YAML, byte for byte what sigs.k8s.io/yaml
// writes for it, several times faster.
func MarshalRecord(rec *spec.PackageSource) ([]byte, error) {
	w := newYWriter(make([]byte, 0, 4096))
	w.Key(0, "apiVersion")
	w.Str(0, rec.APIVersion)
	w.Key(0, "kind")
	w.Str(0, rec.Kind)
	w.Key(0, "metadata")
	w.Mapping(2, func(col int) {
		if a := rec.Metadata.Annotations; len(a) > 0 {
			keys := make([]string, 0, len(a))
			for k := range a {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool { return yamlscan.KeyLess(keys[i], keys[j]) })
			w.Key(col, "annotations")
			w.Mapping(col+2, func(col int) {
				for _, k := range keys {
					w.Key(col, k)
					w.Str(col, a[k])
				}
			})
		}
		w.Key(col, "name")
		w.Str(col, rec.Metadata.Name)
	})
	w.Key(0, "spec")
	writeSpec(w, 2, &rec.Spec)
	if w.Slow {
		return sigsyaml.Marshal(rec)
	}
	return w.B, nil
}
