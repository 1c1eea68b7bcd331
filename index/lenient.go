package index

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	yaml3 "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/internal/yamlscan"
)

// UnknownField is a field of an index that kbuild's types do not have.
type UnknownField struct {
	// Package, Version and Build name the version whose entry or spec has
	// the field; all empty for a field outside every package.
	Package, Version string
	Build            int
	// Path is the field's path, e.g. "spec.variants[0].retries".
	Path string
	// Dropped is true when the field is in a spec whose digest does not
	// match the fields kbuild knows: that version is left out of the index
	// read, as kubepkg leaves it out (the digest covers the field, so it
	// cannot be checked without knowing it). A spec field whose version's
	// digest still matches is ignored and the version kept, as kubepkg
	// keeps it (InSpec).
	Dropped bool
	// InSpec is true when the field is in a spec.
	InSpec bool

	entry bool // in a version entry (Version may be empty in a bad one)
}

// sortUnknown orders unknown fields as both readers list them: by package
// (fields outside every package first); in a package, its own fields by
// path, then those of its version entries in file order.
func sortUnknown(u []UnknownField) {
	sort.SliceStable(u, func(i, j int) bool {
		a, b := &u[i], &u[j]
		switch {
		case a.Package != b.Package:
			return a.Package < b.Package
		case a.entry != b.entry:
			return !a.entry
		case !a.entry:
			return a.Path < b.Path
		}
		return false
	})
}

func (u UnknownField) String() string {
	where := "index.yaml"
	switch {
	case u.Version != "":
		where = fmt.Sprintf("%s %s build %d", u.Package, u.Version, u.Build)
	case u.Package != "":
		where = "package " + u.Package
	}
	if u.Dropped {
		return fmt.Sprintf("%s: field %s is not known to kbuild (written by a newer kubepkg or kbuild?) and the digest does not match the spec without it; this version is left out, as kubepkg leaves it out", where, u.Path)
	}
	if u.InSpec {
		return fmt.Sprintf("%s: field %s is not known to kbuild, but the digest matches the spec without it; this version is kept without the field, as kubepkg keeps it", where, u.Path)
	}
	return fmt.Sprintf("%s: field %s is not known to kbuild; ignored, as kubepkg ignores it", where, u.Path)
}

// readLenient reads an index that the fast reader gave up on the way
// kubepkg's client reads it (sigs.k8s.io/yaml, unknown fields ignored),
// then leaves out every version whose spec has a field the spec types do
// not have, and records each unknown field in x.Unknown. Anchors, aliases
// and several documents are refused as by the strict path.
func readLenient(b []byte) (*RepositoryIndex, error) {
	if err := yamlscan.CheckPlain(b, "index"); err != nil {
		return nil, err
	}
	// sigs.k8s.io/yaml would take the last of two equal keys; another
	// reader may take the first. Such a file means two things: refuse it.
	var doc3 yaml3.Node
	if err := yaml3.Unmarshal(b, &doc3); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	if err := yamlscan.NoDuplicateKeys(&doc3, "index", 1); err != nil {
		return nil, err
	}
	var doc any
	if err := sigsyaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	top, _ := doc.(map[string]any)
	x := &RepositoryIndex{}
	if err := sigsyaml.Unmarshal(b, x); err != nil {
		return nil, typeError(top, err)
	}
	var found []UnknownField
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if k == "packages" {
			continue
		}
		found = append(found, unknownFields(top[k], reflect.TypeFor[RepositoryIndex](), k, true)...)
	}
	pkgs, _ := top["packages"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(pkgs)) {
		p := x.Packages[name]
		pm, _ := pkgs[name].(map[string]any)
		if p == nil || pm == nil {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(pm)) {
			if k != "versions" {
				for _, u := range unknownFields(pm[k], reflect.TypeFor[IndexPackage](), k, true) {
					u.Package = name
					found = append(found, u)
				}
			}
		}
		vl, _ := pm["versions"].([]any)
		if len(vl) != len(p.Versions) {
			continue
		}
		kept := p.Versions[:0]
		for i, raw := range vl {
			v := p.Versions[i]
			vm, _ := raw.(map[string]any)
			unknown, dropped := versionUnknowns(vm, name, &v)
			found = append(found, unknown...)
			if !dropped {
				kept = append(kept, v)
			}
		}
		if len(kept) == 0 && len(p.Versions) > 0 {
			// Every version left out: so is the package. A package
			// without versions is refused by checkPackage.
			delete(x.Packages, name)
		}
		p.Versions = kept
	}
	sortUnknown(found)
	x.Unknown = found
	return x, nil
}

// typeError is err, the error of decoding top (the index decoded
// generically) into a RepositoryIndex, naming the package and version
// whose value has the wrong type where one has.
func typeError(top map[string]any, err error) error {
	pkgs, _ := top["packages"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(pkgs)) {
		pm, _ := pkgs[name].(map[string]any)
		vl, _ := pm["versions"].([]any)
		for _, raw := range vl {
			if verr := decodeVersion(raw); verr != nil {
				return fmt.Errorf("index: package %s %w", name, verr)
			}
		}
		if j, jerr := json.Marshal(pkgs[name]); jerr == nil {
			var p IndexPackage
			if perr := json.Unmarshal(j, &p); perr != nil {
				return fmt.Errorf("index: package %s: %w", name, fieldTypeError(perr))
			}
		}
	}
	return fmt.Errorf("index: %w", fieldTypeError(err))
}

// versionUnknowns lists the unknown fields of vm, version version build
// build of package name as decoded generically, and reports whether one is
// in the spec, which leaves the version out.
func versionUnknowns(vm map[string]any, name string, v *IndexVersion) (found []UnknownField, dropped bool) {
	matches := false
	if d, err := v.Spec.Digest(); err == nil && d == v.Digest {
		matches = true
	}
	for _, k := range slices.Sorted(maps.Keys(vm)) {
		for _, u := range unknownFields(vm[k], reflect.TypeFor[IndexVersion](), k, true) {
			u.Package, u.Version, u.Build, u.entry = name, v.Version, v.Build, true
			u.InSpec = strings.HasPrefix(u.Path, "spec.")
			u.Dropped = u.InSpec && !matches
			dropped = dropped || u.Dropped
			found = append(found, u)
		}
	}
	return found, dropped
}

// unknownFields lists the keys of v, the value of field key of a value of
// type t, that t's field key (by JSON name) does not have, recursively.
// With top, key itself is checked against t's fields.
func unknownFields(v any, t reflect.Type, key string, top bool) []UnknownField {
	if top {
		f, ok := jsonField(t, key)
		if !ok {
			return []UnknownField{{Path: key}}
		}
		t = f
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []UnknownField
	switch val := v.(type) {
	case map[string]any:
		if t.Kind() == reflect.Map {
			for _, k := range slices.Sorted(maps.Keys(val)) {
				out = append(out, unknownFields(val[k], t.Elem(), key+"."+k, false)...)
			}
			return out
		}
		if t.Kind() != reflect.Struct || t == reflect.TypeFor[time.Time]() {
			return nil
		}
		for _, k := range slices.Sorted(maps.Keys(val)) {
			ft, ok := jsonField(t, k)
			if !ok {
				out = append(out, UnknownField{Path: key + "." + k})
				continue
			}
			out = append(out, unknownFields(val[k], ft, key+"."+k, false)...)
		}
	case []any:
		if t.Kind() != reflect.Slice {
			return nil
		}
		for i, e := range val {
			out = append(out, unknownFields(e, t.Elem(), fmt.Sprintf("%s[%d]", key, i), false)...)
		}
	}
	return out
}

// jsonField returns the type of t's field whose JSON name is name,
// matched without regard to case as encoding/json matches it.
func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if strings.EqualFold(n, name) && n != "-" && f.IsExported() {
			return f.Type, true
		}
	}
	return nil, false
}
