package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

// TestSpecDigestEscapes checks the spec digest against a hand-written
// encoding/json form: fields in order, empty ones left out, and <, >, &
// escaped as \u003c, \u003e, \u0026.
func TestSpecDigestEscapes(t *testing.T) {
	s := PackageSpec{
		Version:  "1.9.0",
		Build:    4,
		Rollback: &Rollback{},
		Variants: []Variant{{Name: "default", Requires: []Requirement{{Package: "cdi", Version: ">=1.2 <2"}, {Capability: "api:a&b/v1", Optional: true}}}},
	}
	const want = `{"version":"1.9.0","build":4,"rollback":{},"variants":[{"name":"default","requires":[{"package":"cdi","version":"\u003e=1.2 \u003c2"},{"capability":"api:a\u0026b/v1","optional":true}]}]}`
	got, err := s.CanonicalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("CanonicalJSON =\n%s\nwant\n%s", got, want)
	}
	sum := sha256.Sum256([]byte(want))
	d, _ := s.Digest()
	if d != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("Digest = %s, want sha256 of the JSON above", d)
	}
	// A declared rollback with safe false differs from none.
	s.Rollback = nil
	if d2, _ := s.Digest(); d2 == d {
		t.Fatal("rollback {} and no rollback have the same digest")
	}
}

// TestSpecFieldsMatchTags checks that SpecFields, the table the fast
// encoder and writer use, says what the json tags of the spec types say,
// and that it names every field of them.
func TestSpecFieldsMatchTags(t *testing.T) {
	types := map[string]reflect.Type{}
	for _, v := range []any{PackageSpec{}, SourceRef{}, Permissions{}, PolicyRule{}, Rollback{}, Variant{}, Requirement{}, Library{}, Component{}, ChartRef{}, Install{}, HealthCheck{}, ReadyWhen{}} {
		types[reflect.TypeOf(v).Name()] = reflect.TypeOf(v)
	}
	seen := map[string]bool{}
	for f, info := range SpecFields {
		typ := types[info.Type]
		if typ == nil {
			t.Fatalf("SpecFields[%d]: unknown type %q", f, info.Type)
		}
		found := false
		for i := 0; i < typ.NumField(); i++ {
			name, opts, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name != info.JSON {
				continue
			}
			found = true
			if omit := opts == "omitempty"; omit != info.OmitEmpty {
				t.Errorf("%s.%s: tag omitempty %v, SpecFields says %v", info.Type, info.JSON, omit, info.OmitEmpty)
			}
		}
		if !found {
			t.Errorf("SpecFields names %s.%s, which has no such field", info.Type, info.JSON)
		}
		seen[info.Type+"."+info.JSON] = true
	}
	for n, typ := range types {
		for i := 0; i < typ.NumField(); i++ {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if !seen[n+"."+name] {
				t.Errorf("%s.%s is not in SpecFields", n, name)
			}
		}
	}
}
