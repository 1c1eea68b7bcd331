package index

import (
	"reflect"
	"strings"

	"kbuild.dev/kbuild/internal/yamlscan"
	"kbuild.dev/kbuild/spec"
)

// yreader is the fast YAML reader (internal/yamlscan) with what the
// typed decoders of this package add: blocks of values (slabs) and, for
// an index, the lenient handling of fields kbuild does not know.
//
// Anything the fast reader does not handle stops it with a
// *yamlscan.Bail, and the caller decodes the document with
// sigs.k8s.io/yaml instead, which is authoritative (decodeYAML,
// readLenient); FuzzParseIndex checks that both agree.
type yreader struct {
	*yamlscan.Reader
	slab *slabs

	// lenient is set when reading an index: a key the typed decoder does
	// not know is skipped (SkipValue) rather than a reason to give up, as
	// kubepkg's client ignores it. found lists the fields skipped outside
	// versions; skipped counts every field skipped, so that readVersions
	// can tell which versions had one (see lenientTypes).
	lenient bool
	found   []UnknownField
	skipped int
}

// newYReaderOf positions a reader of b before the document's root
// mapping; with share, the reader and the strings it
// returns use b itself, which must then never be modified. Values come
// from slab, or new slabs when nil.
func newYReaderOf(b []byte, share bool, slab *slabs) (*yreader, error) {
	r, err := yamlscan.NewReader(b, share)
	if err != nil {
		return nil, err
	}
	if slab == nil {
		slab = &slabs{}
	}
	return &yreader{Reader: r, slab: slab}, nil
}

// readStrings reads a sequence of strings. A present empty sequence is an
// empty, non-nil slice, as encoding/json makes it.
func (r *yreader) readStrings(field string) ([]string, error) {
	out := r.slab.strs.tmp[:0]
	present, err := r.ReadSeq(func() error {
		s, err := r.ReadString(field)
		out = append(out, s)
		return err
	})
	r.slab.strs.tmp = out[:0]
	if !present {
		return nil, err
	}
	list := take(&r.slab.strs, len(out))
	copy(list, out)
	return list, err
}

// unknown handles a key a typed decoder does not know, in a value of kind
// where ("spec", "package NAME", ...). Strictly it is a reason to give up;
// reading an index leniently it skips the key's value and records it, but
// still gives up on a key that differs from a known one only in letter case
// (encoding/json, and so kubepkg, would decode it into that field) and on
// unknown keys where kubepkg's types have nothing to ignore them.
func (r *yreader) unknown(where, key string) error {
	t, ok := lenientTypes[where]
	pkg, isPkg := strings.CutPrefix(where, "package ")
	if isPkg {
		t, ok = reflect.TypeFor[IndexPackage](), true
	}
	if !r.lenient || !ok {
		return r.Bailf("unknown field %q in %s", key, where)
	}
	if _, folds := jsonField(t, key); folds {
		return r.Bailf("field %q in %s differs from a known field only in letter case", key, where)
	}
	if err := r.SkipValue(); err != nil {
		return err
	}
	r.skipped++
	switch {
	case where == "index":
		r.found = append(r.found, UnknownField{Path: key})
	case isPkg:
		r.found = append(r.found, UnknownField{Package: pkg, Path: key})
	}
	// Inside a version readVersions names the field with its full path.
	return nil
}

// lenientTypes are the values of an index, by the where of unknown, in
// which an unknown key is skipped when reading leniently.
var lenientTypes = map[string]reflect.Type{
	"index":            reflect.TypeFor[RepositoryIndex](),
	"version":          reflect.TypeFor[IndexVersion](),
	"signature":        reflect.TypeFor[Signature](),
	"spec":             reflect.TypeFor[spec.PackageSpec](),
	"rollback":         reflect.TypeFor[spec.Rollback](),
	"sourceRef":        reflect.TypeFor[spec.SourceRef](),
	"permissions":      reflect.TypeFor[spec.Permissions](),
	"rule":             reflect.TypeFor[spec.PolicyRule](),
	"variant":          reflect.TypeFor[spec.Variant](),
	"requirement":      reflect.TypeFor[spec.Requirement](),
	"library":          reflect.TypeFor[spec.Library](),
	"component":        reflect.TypeFor[spec.Component](),
	"chart":            reflect.TypeFor[spec.ChartRef](),
	"install":          reflect.TypeFor[spec.Install](),
	"healthCheckExprs": reflect.TypeFor[spec.HealthCheck](),
	"readyWhen":        reflect.TypeFor[spec.ReadyWhen](),
}
