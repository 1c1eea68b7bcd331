package index

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	yaml2 "go.yaml.in/yaml/v2"
	sigsyaml "sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/internal/yamlscan"
	"kbuild.dev/kbuild/spec"
)

// trickyStrings exercise the writer's style choice and folding and the
// reader's scalar forms.
var trickyStrings = []string{
	"", "a", "kubevirt", "1.9.0", "1.9.0-4", "1.10", "010", "0x1F", "1e3", "1_000", "+1", "-1", ".5", ".inf", "-.inf", ".nan",
	"true", "True", "yes", "no", "on", "off", "y", "n", "null", "~", "Null", "<<", "2026-10-10", "2026-10-10T12:00:00Z",
	"1:20", "12:30:45", "0b101", "-0b11", "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	">=1.2 <2", "a: b", "a:b", "a #b", "a#b", "#x", "- x", "-x", "? x", "?x", ": x", ":x", "x:", "'quoted'", "\"dq\"", "a'b", "a\"b", "back\\slash",
	"[a]", "{a}", "a,b", "&anchor", "*alias", "!tag", "|pipe", ">fold", "%pct", "@at", "`tick`", "---", "...", "--- x", "a  b", " lead", "trail ",
	"quay.io/kubevirt/virt-operator:v1.9.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	"has(self.status) && self.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True') and some more words to fold it twice over the width",
	"a very long description with spaces that goes on and on past the eighty column line width of yaml.v2 so it folds",
	"x:  has(self.status) && self.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')  y  z  and more  double  spaces  here",
	"\"quoted start\" and a long tail of words that will need to fold at the width of eighty columns somewhere",
	"long    runs    of    spaces    in    a    string    that    is    longer    than    eighty    columns    total",
	"multi\nline", "multi\nline\n", "\nleading newline", "trailing\n\n", "tab\there", "ünïcödé", "emoji 🎉", "nbsp\u00a0x", "ctl\x01x",
	"a long string that ends with a quote char and folds over the width of the line in yaml.v2's emitter '",
}

func randString(rng *rand.Rand) string {
	switch rng.Intn(4) {
	case 0:
		return trickyStrings[rng.Intn(len(trickyStrings))]
	case 1:
		// Random printable ASCII words, sometimes long.
		n := rng.Intn(20)
		words := make([]string, n)
		for i := range words {
			w := make([]byte, 1+rng.Intn(12))
			for j := range w {
				w[j] = byte(0x21 + rng.Intn(0x5e))
			}
			words[i] = string(w)
		}
		return strings.Join(words, strings.Repeat(" ", 1+rng.Intn(2)))
	case 2:
		return fmt.Sprintf("%d.%d.%d", rng.Intn(20), rng.Intn(20), rng.Intn(20))
	}
	return "plain-" + fmt.Sprint(rng.Intn(1000))
}

func randStrings(rng *rand.Rand) []string {
	n := rng.Intn(5)
	switch n {
	case 0:
		return nil
	case 4:
		return []string{}
	}
	out := make([]string, n)
	for i := range out {
		out[i] = randString(rng)
	}
	return out
}

func randSpec(rng *rand.Rand) spec.PackageSpec {
	s := spec.PackageSpec{Version: randString(rng), Build: rng.Intn(5), Provides: randStrings(rng), Conflicts: randStrings(rng), CRDs: randStrings(rng), Images: randStrings(rng)}
	if rng.Intn(3) == 0 {
		s.SourceRef = &spec.SourceRef{Kind: randString(rng), Name: randString(rng), URL: randString(rng)}
	}
	if rng.Intn(2) == 0 {
		s.Permissions = &spec.Permissions{ClusterWide: rng.Intn(2) == 0}
		for i := rng.Intn(3); i > 0; i-- {
			s.Permissions.Rules = append(s.Permissions.Rules, spec.PolicyRule{Verbs: randStrings(rng), APIGroups: randStrings(rng), Resources: randStrings(rng), ResourceNames: randStrings(rng), NonResourceURLs: randStrings(rng)})
		}
	}
	if rng.Intn(2) == 0 {
		s.Rollback = &spec.Rollback{Safe: rng.Intn(2) == 0}
	}
	for i := rng.Intn(3); i > 0; i-- {
		v := spec.Variant{Name: randString(rng), DependsOn: randStrings(rng)}
		for j := rng.Intn(3); j > 0; j-- {
			v.Requires = append(v.Requires, spec.Requirement{Package: randString(rng), Capability: randString(rng), Version: randString(rng), Optional: rng.Intn(2) == 0})
		}
		for j := rng.Intn(2); j > 0; j-- {
			v.Libraries = append(v.Libraries, spec.Library{Name: randString(rng), Path: randString(rng)})
		}
		for j := rng.Intn(3); j > 0; j-- {
			c := spec.Component{Name: randString(rng), Libraries: randStrings(rng), ValuesFiles: randStrings(rng)}
			if rng.Intn(4) > 0 {
				c.Chart = &spec.ChartRef{Repository: randString(rng), Name: randString(rng), Version: randString(rng), Digest: randString(rng)}
			}
			if rng.Intn(2) == 0 {
				in := &spec.Install{ReleaseName: randString(rng), Namespace: randString(rng), Privileged: rng.Intn(2) == 0, DependsOn: randStrings(rng), UpgradeCRDs: randString(rng), WaitStrategy: randString(rng), Phase: randString(rng)}
				for k := rng.Intn(2); k > 0; k-- {
					in.HealthCheckExprs = append(in.HealthCheckExprs, spec.HealthCheck{APIVersion: randString(rng), Kind: randString(rng), Current: randString(rng), InProgress: randString(rng), Failed: randString(rng)})
				}
				for k := rng.Intn(2); k > 0; k-- {
					in.ReadyWhen = append(in.ReadyWhen, spec.ReadyWhen{APIVersion: randString(rng), Kind: randString(rng), Name: randString(rng), Namespace: randString(rng), Condition: randString(rng), Status: randString(rng)})
				}
				c.Install = in
			}
			v.Components = append(v.Components, c)
		}
		s.Variants = append(s.Variants, v)
	}
	if rng.Intn(10) == 0 {
		s.Variants = append(s.Variants, spec.Variant{})
	}
	return s
}

func randIndex(rng *rand.Rand) *RepositoryIndex {
	x := &RepositoryIndex{APIVersion: IndexAPIVersion, Kind: IndexKind, Generated: time.Unix(1791633600+int64(rng.Intn(1000)), 0).UTC(), Packages: map[string]*IndexPackage{}}
	if rng.Intn(2) == 0 {
		x.Expires = x.Generated.Add(720 * time.Hour)
	}
	names := []string{"kubevirt", "cdi", "on", "pkg-9", "pkg-10", "a1", "a01", "1a", "0x10", "y", "true", "a-b"}
	for i := rng.Intn(4); i > 0; i-- {
		p := &IndexPackage{Description: randString(rng), Home: randString(rng)}
		for j := 1 + rng.Intn(3); j > 0; j-- {
			v := IndexVersion{Version: randString(rng), Build: rng.Intn(7), Digest: randString(rng), Spec: randSpec(rng)}
			for k := rng.Intn(3); k > 0; k-- {
				v.Signatures = append(v.Signatures, Signature{KeyID: randString(rng), Sig: randString(rng)})
			}
			p.Versions = append(p.Versions, v)
		}
		x.Packages[names[rng.Intn(len(names))]] = p
	}
	return x
}

// TestWriterMatchesYAMLv2 compares Marshal with sigs.k8s.io/yaml on random
// indexes full of strings that need quoting, escaping and folding.
func TestWriterMatchesYAMLv2(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 3000; i++ {
		x := randIndex(rng)
		got, err := x.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		want, err := sigsyaml.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d: Marshal differs from sigs.k8s.io/yaml\n%s", i, firstDiff(got, want))
		}
	}
}

// TestReaderMatchesYAMLv2 decodes what yaml.v2 writes with the fast reader
// and with sigs.k8s.io/yaml and compares the values; the fast reader must
// not give up on output that holds only the characters it reads.
func TestReaderMatchesYAMLv2(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	bails := 0
	for i := 0; i < 600; i++ {
		x := randIndex(rng)
		b, err := sigsyaml.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		var slow RepositoryIndex
		if err := yamlscan.DecodeStrict(b, "index", &slow); err != nil {
			t.Fatalf("case %d: slow: %v\n%s", i, err, b)
		}
		var fast RepositoryIndex
		r, err := newYReader(b)
		if err == nil {
			err = readIndex(r, &fast, keepAll)
		}
		var bail *yamlscan.Bail
		if errors.As(err, &bail) {
			bails++
			if !strings.Contains(bail.Msg, "character") && !strings.Contains(bail.Msg, "control") {
				t.Errorf("case %d: fast reader gave up: %v\n%s", i, err, numbered(b, bail.Line))
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&fast, &slow) {
			t.Fatalf("case %d: fast and slow decoding differ\nfast: %+v\nslow: %+v\n%s", i, fast, slow, b)
		}
	}
	t.Logf("%d of 600 documents left to the slow path (characters the fast reader refuses)", bails)
}

// TestReaderForms checks YAML forms that yaml.v2 does not write but people
// do, against sigs.k8s.io/yaml.
func TestReaderForms(t *testing.T) {
	docs := []string{
		"a: 1\n",
		"---\nversion: 1.0.0\nbuild: 2\n",
		"version: '1.0.0'   # comment\nbuild: 2 # c\n# whole line\n\nimages:\n  - a\n  - 'b'\n  - \"c\"\n",
		"images: [ ]\n",
		"images: []\n",
		"images:\n- a\n-\n- c\n",
		"rollback: {}\n",
		"rollback:\n",
		"rollback: null\n",
		"rollback:\n  safe: true\n",
		"rollback:\n    safe: true\n",
		"variants:\n  - name: x\n    components:\n      - name: c\n        chart:\n          name: n\n",
		"variants:\n-   name: x\n    dependsOn:\n    - a\n",
		"variants:\n- {}\n- name: a\n",
		"version: \"a\\tb\\u00e9\\x41\\U0001F600\\\\\\\"\"\n",
		"version: 'it''s'\n",
		"version: \"folded\n  line\"\n",
		"version: \"folded\n\n  para\"\n",
		"version: 'folded\n  line'\n",
		"version: plain\n  continued\n  again\n",
		"version: |\n  lit\n  eral\n",
		"version: |-\n  lit\n\n  eral\n\n",
		"version: |+\n  lit\n\n",
		"version: |2\n    indented\n  less\n",
		"version: |\n  a\n   b\n  c\n# comment\nbuild: 3\n",
		"version: |\n  # not a comment\n",
		"version: yes\n",
		"version: 1.10\n",
		"build: 0x10\n",
		"build: '3'\n",
		"build: 07\n",
		"Version: x\n",
		"version: x\nversion: y\n",
		"version: &a x\nimages: [*a]\n",
		"version: !!str 1.0\n",
		"version: >\n  folded\n",
		"images:\n- a\nimages2: x\n",
		"version: a\n  b: c\n",
		"version:\n  x\n",
		"a:\n\tb: 1\n",
		"permissions:\n  clusterWide: true\n  rules:\n  - verbs: [get, list]\n",
		"provides:\n- \"a\"\n- b # comment\n- 'c' # comment\n",
		"version: \"a\" x\n",
		"version: x # c\n  y\n",
		"version: '#x'\n",
		"version: a#b\n",
		"version: ~\n",
		"version:\n",
		"version: \"\"\n",
		"sourceRef:\n  kind: x\n  url: http://example.com/a#b\n",
		"version: |\n\n  late\n",
		"version: |1\n  x\n",
		"crds:\n- a\n- - b\n",
		"version: \"\\\n  x\"\n",
	}
	for _, doc := range docs {
		var slow spec.PackageSpec
		slowErr := yamlscan.DecodeStrict([]byte(doc), "spec", &slow)
		var fast spec.PackageSpec
		r, err := newYReader([]byte(doc))
		if err == nil {
			err = r.ReadRoot(func(k string) error { return readSpecField(r, &fast, k) })
		}
		var bail *yamlscan.Bail
		switch {
		case errors.As(err, &bail):
			t.Logf("%q: fast reader gave up (%v); slow: %v", doc, bail, slowErr)
		case err != nil:
			t.Errorf("%q: fast reader error %v", doc, err)
		case slowErr != nil:
			t.Errorf("%q: fast reader accepted what sigs.k8s.io/yaml refuses (%v): %+v", doc, slowErr, fast)
		case !reflect.DeepEqual(fast, slow):
			t.Errorf("%q: fast %+v, slow %+v", doc, fast, slow)
		}
	}
}

func TestKeyOrder(t *testing.T) {
	keys := []string{"a", "b", "B", "a1", "a10", "a2", "a01", "a001", "a0", "1", "10", "9", "-", "_x", "x_", "pkg-9", "pkg-10", "Ä", "é", "a-b", "a.b", "ab", "a b", "0x", "00", "0", "a09", "a9b", "a09c"}
	mm := map[string]int{}
	for i, k := range keys {
		mm[k] = i
	}
	b, err := yaml2.Marshal(mm)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var n int
		fmt.Sscan(line[strings.LastIndex(line, " ")+1:], &n)
		want = append(want, keys[n])
	}
	got := append([]string(nil), keys...)
	sort.Slice(got, func(i, j int) bool { return yamlscan.KeyLess(got[i], got[j]) })
	if !reflect.DeepEqual(got, want) {
		t.Errorf("key order\n got %q\nwant %q", got, want)
	}
}

// TestWriterFieldOrder checks that every field of the spec types is written,
// by comparing a fully populated spec with sigs.k8s.io/yaml.
func TestWriterFieldOrder(t *testing.T) {
	s := fullSpec()
	fillZero(reflect.ValueOf(&s).Elem())
	x := &RepositoryIndex{APIVersion: IndexAPIVersion, Kind: IndexKind, Generated: time.Unix(0, 0).UTC(), Packages: map[string]*IndexPackage{"p": {Versions: []IndexVersion{{Version: "1.0.0", Build: 1, Digest: "d", Spec: s, Signatures: []Signature{{KeyID: "k", Sig: "s"}}}}}}}
	got, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := sigsyaml.Marshal(x)
	if !bytes.Equal(got, want) {
		t.Fatalf("Marshal differs:\n%s", firstDiff(got, want))
	}
}

// fillZero sets every empty string, bool, int, pointer and slice reachable
// from v, so that no field is left out.
func fillZero(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.String() == "" {
			v.SetString("s-" + strings.ToLower(v.Type().Name()))
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int:
		if v.Int() == 0 {
			v.SetInt(7)
		}
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fillZero(v.Elem())
	case reflect.Slice:
		if v.Len() == 0 {
			v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
		}
		for i := 0; i < v.Len(); i++ {
			fillZero(v.Index(i))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fillZero(v.Field(i))
		}
	}
}

func fullSpec() spec.PackageSpec { return spec.PackageSpec{} }

func firstDiff(got, want []byte) string {
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			lo := max(0, i-3)
			return fmt.Sprintf("line %d:\n got %q\nwant %q\ncontext:\n%s", i+1, g, w, strings.Join(wl[lo:min(len(wl), i+3)], "\n"))
		}
	}
	return "(equal)"
}

func numbered(b []byte, line int) string {
	ls := strings.Split(string(b), "\n")
	lo, hi := max(0, line-4), min(len(ls), line+3)
	var out []string
	for i := lo; i < hi; i++ {
		out = append(out, fmt.Sprintf("%4d %s", i+1, ls[i]))
	}
	return strings.Join(out, "\n")
}

// TestSpecJSONMatchesEncodingJSON compares the fast canonical encoder with
// encoding/json on random specs and strings that need escaping.
func TestSpecJSONMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	extra := []string{"<>&", "\u2028\u2029", "\xff\xfe", "a\x00b\x1f\x7f", "\b\f\n\r\t", "é😀", "\"\\", ">=1.2 <2"}
	for i := 0; i < 5000; i++ {
		s := randSpec(rng)
		if i%3 == 0 {
			s.Images = append(s.Images, extra[rng.Intn(len(extra))])
		}
		want, err := s.CanonicalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if got := spec.AppendJSON(nil, &s); !bytes.Equal(got, want) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
	s := fullSpec()
	fillZero(reflect.ValueOf(&s).Elem())
	want, _ := s.CanonicalJSON()
	if got := spec.AppendJSON(nil, &s); !bytes.Equal(got, want) {
		t.Fatalf("full spec:\n got %s\nwant %s", got, want)
	}
}

// TestParallelPaths runs the parallel reading and writing of packages on
// small indexes and compares them with yaml.v2 and the sequential paths.
func TestParallelPaths(t *testing.T) {
	defer func(n int) { parallelMinBytes = n }(parallelMinBytes)
	parallelMinBytes = 1
	rng := rand.New(rand.NewSource(4))
	for i := 0; i < 400; i++ {
		x := randIndex(rng)
		got, err := x.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := sigsyaml.Marshal(x)
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d: parallel Marshal differs\n%s", i, firstDiff(got, want))
		}
		var slow RepositoryIndex
		if err := yamlscan.DecodeStrict(want, "index", &slow); err != nil {
			t.Fatal(err)
		}
		r, err := newYReader(want)
		if err != nil {
			continue // characters the fast reader leaves to yaml.v2
		}
		var fast RepositoryIndex
		if err := readIndex(r, &fast, keepAll); err != nil {
			t.Fatalf("case %d: parallel read: %v", i, err)
		}
		if !reflect.DeepEqual(&fast, &slow) {
			t.Fatalf("case %d: parallel read differs", i)
		}
	}
	big := realisticIndex(40, 5)
	b, err := big.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	par, err := ParseIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	parallelMinBytes = 1 << 40
	seq, err := ParseIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := seq.Marshal()
	if !reflect.DeepEqual(par, seq) || !bytes.Equal(b, b2) {
		t.Fatal("parallel and sequential paths differ")
	}
	// Documents the split must not be fooled by.
	for _, doc := range []string{
		"apiVersion: kubepkg.dev/v1alpha1\ngenerated: \"2026-10-10T12:00:00Z\"\nkind: RepositoryIndex\npackages:\n   a:\n     versions: []\n",
		"apiVersion: kubepkg.dev/v1alpha1\ngenerated: \"2026-10-10T12:00:00Z\"\nkind: RepositoryIndex\npackages:\n  a:\n    versions: []\n  a:\n    versions: []\n",
		"apiVersion: kubepkg.dev/v1alpha1\ngenerated: \"2026-10-10T12:00:00Z\"\nkind: RepositoryIndex\npackages:\n  a:\n    versions: []\n # c\n  b:\n    versions: []\n x: 1\n",
		"apiVersion: kubepkg.dev/v1alpha1\ngenerated: \"2026-10-10T12:00:00Z\"\nkind: RepositoryIndex\npackages:\n  a:\n    versions: []\n  b:\n    versions: []\nzzz: 1\n",
	} {
		parallelMinBytes = 1
		_, perr := ParseIndex([]byte(doc))
		parallelMinBytes = 1 << 40
		_, serr := ParseIndex([]byte(doc))
		if (perr == nil) != (serr == nil) {
			t.Errorf("%q: parallel %v, sequential %v", doc, perr, serr)
		}
	}
}

func TestMarshalRecordMatchesYAMLv2(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	for i := 0; i < 1000; i++ {
		rec := &spec.PackageSource{APIVersion: randString(rng), Kind: spec.RecordKind, Metadata: spec.RecordMetadata{Name: randString(rng)}, Spec: randSpec(rng)}
		if i%2 == 0 {
			rec.Metadata.Annotations = map[string]string{DescriptionAnnotation: randString(rng), HomeAnnotation: randString(rng), randString(rng): randString(rng)}
		}
		got, err := MarshalRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := sigsyaml.Marshal(rec)
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d:\n%s", i, firstDiff(got, want))
		}
	}
}

// keepAll is a visitor that keeps every package as decoded.
func keepAll(string, *IndexPackage) (bool, error) { return true, nil }

// TestReaderKnowsEveryField: a spec with every field of SpecFields set,
// written by the fast writer, is read back by the fast reader strictly
// (no field unknown to it, no giving up) to the same spec, so a field the
// table has and the reader does not fails here; TestSpecFieldsMatchTags
// fails for a struct field the table does not have, and
// TestWriterFieldOrder and TestSpecJSONMatchesEncodingJSON for one the
// writer or the digest encoder leave out.
func TestReaderKnowsEveryField(t *testing.T) {
	s := fullSpec()
	fillZero(reflect.ValueOf(&s).Elem())
	w := newYWriter(nil)
	w.Key(0, "spec")
	writeSpec(w, 2, &s)
	if w.Slow {
		t.Fatal("the fast writer gave up on the full spec")
	}
	r, err := newYReader(w.B)
	if err != nil {
		t.Fatal(err)
	}
	var got spec.PackageSpec
	if err := r.ReadRoot(func(k string) error {
		if k != "spec" {
			return fmt.Errorf("key %q", k)
		}
		_, err := readSpec(r, &got)
		return err
	}); err != nil {
		t.Fatalf("the fast reader refuses the full spec: %v\n%s", err, w.B)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("read back differs:\n got %+v\nwant %+v", got, s)
	}
	// Every entry of the table is in what was written.
	for _, f := range spec.SpecFields {
		if !strings.Contains(string(w.B), " "+f.JSON+":") {
			t.Errorf("%s.%s is not written", f.Type, f.JSON)
		}
	}
}

// newYReader positions a reader of a copy of b before the document's
// root mapping.
func newYReader(b []byte) (*yreader, error) { return newYReaderOf(b, false, nil) }
