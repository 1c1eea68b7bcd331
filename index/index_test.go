package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sigsyaml "sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./index -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test ./index -update if the change is intended):\n%s", p, firstDiff(got, want))
	}
}

var testTime = time.Date(2026, 10, 10, 12, 0, 0, 0, time.UTC)

func testDigest(n int) string {
	sum := sha256.Sum256([]byte{byte(n)})
	return "sha256:" + hex.EncodeToString(sum[:])
}

// record returns a build record of name, version and build with one
// variant and one component.
func record(name, version string, build int) *PackageSource {
	return &PackageSource{
		APIVersion: RecordAPIVersion, Kind: RecordKind,
		Metadata: RecordMetadata{Name: name, Annotations: map[string]string{DescriptionAnnotation: "The " + name + " package", HomeAnnotation: "https://example.com/" + name}},
		Spec: PackageSpec{
			Version: version, Build: build,
			Provides: []string{name},
			Rollback: &Rollback{},
			Images:   []string{"registry.example.com/" + name + ":v" + version + "@" + testDigest(build)},
			Variants: []Variant{{Name: "default", Components: []Component{{
				Name:    "main",
				Chart:   &ChartRef{Repository: "oci://registry.example.com/" + name, Name: name, Version: version + "-" + itoa(build), Digest: testDigest(100 + build)},
				Install: &Install{ReleaseName: name, Namespace: name},
			}}}},
		},
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func buildIndex(t testing.TB, recs ...*PackageSource) *RepositoryIndex {
	t.Helper()
	b := NewBuilder()
	for i, r := range recs {
		if err := b.Add("record-"+itoa(i), r, nil); err != nil {
			t.Fatal(err)
		}
	}
	x, err := b.Index(testTime)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestIndexGolden pins the bytes of an index, which are also what
// sigs.k8s.io/yaml writes, and its ordering rules: packages in yaml.v2 key
// order, versions newest first by semver precedence then build.
func TestIndexGolden(t *testing.T) {
	kv := record("kubevirt", "1.9.0", 4)
	kv.Spec.Variants[0].Requires = []Requirement{{Package: "cdi", Version: ">=1.2 <2"}}
	kv.Spec.Permissions = &Permissions{ClusterWide: true, Rules: []PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}}
	kv.Spec.Variants[0].Components[0].Install.HealthCheckExprs = []HealthCheck{{APIVersion: "kubevirt.io/v1", Kind: "KubeVirt",
		Current: "has(self.status) && self.status.conditions.exists(c, c.type == 'Available' && c.status == 'True')"}}
	kv.Spec.Variants[0].Components[0].Install.ReadyWhen = []ReadyWhen{{APIVersion: "kubevirt.io/v1", Kind: "KubeVirt", Name: "kubevirt", Namespace: "kubevirt", Condition: "Available", Status: "True"}}
	recs := []*PackageSource{
		kv,
		record("kubevirt", "1.10.0-rc.1", 1),
		record("kubevirt", "1.10.0", 1),
		record("kubevirt", "1.9.0", 5),
		record("kubevirt", "1.9.0", 3),
		record("cdi", "1.66.1", 2),
		record("pkg-10", "1.0.0", 1),
		record("pkg-9", "1.0.0", 1),
	}
	x := buildIndex(t, recs...)
	x.Expires = testTime.Add(720 * time.Hour)
	got, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "index.golden.yaml", got)
	want, _ := sigsyaml.Marshal(x)
	if !bytes.Equal(got, want) {
		t.Fatalf("Marshal differs from sigs.k8s.io/yaml:\n%s", firstDiff(got, want))
	}
	var order []string
	for _, v := range x.Packages["kubevirt"].Versions {
		order = append(order, v.Version+"/"+itoa(v.Build))
	}
	if got, want := strings.Join(order, " "), "1.10.0/1 1.10.0-rc.1/1 1.9.0/5 1.9.0/4 1.9.0/3"; got != want {
		t.Errorf("version order = %s, want %s", got, want)
	}
	if i, j := bytes.Index(got, []byte("\n  pkg-9:")), bytes.Index(got, []byte("\n  pkg-10:")); i < 0 || j < 0 || i > j {
		t.Errorf("pkg-9 must come before pkg-10, as yaml.v2 orders keys")
	}
	back, err := ParseIndex(got)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := back.Marshal()
	if !bytes.Equal(again, got) {
		t.Fatal("parse and marshal changed the index")
	}
}

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

func TestBuilderErrors(t *testing.T) {
	withPath := record("kubevirt", "1.9.0", 4)
	withPath.Spec.Variants[0].Components[0].Path = "charts/operator"
	tests := []struct {
		name string
		rec  *PackageSource
		want string
	}{
		{"bad name", record("Kube_Virt", "1.9.0", 1), "not a DNS-1123 label"},
		{"leading v", record("kubevirt", "v1.9.0", 1), `version starts with "v"; kbuild writes 1.9.0`},
		{"build 0", record("kubevirt", "1.9.0", 0), "build is 0, want 1 or more"},
		{"path component", withPath, `uses path "charts/operator"`},
		{"wrong kind", &PackageSource{APIVersion: RecordAPIVersion, Kind: "Recipe"}, `kind is "Recipe"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := NewBuilder().Add("dist/x.yaml", tc.rec, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "dist/x.yaml: ") {
				t.Fatalf("Add = %v, want an error naming the file and containing %q", err, tc.want)
			}
		})
	}
	b := NewBuilder()
	if err := b.Add("dist/a.yaml", record("kubevirt", "1.9.0", 4), nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Add("dist/copy.yaml", record("kubevirt", "1.9.0", 4), nil); err != nil {
		t.Fatalf("an identical record twice: %v", err)
	}
	changed := record("kubevirt", "1.9.0", 4)
	changed.Spec.Images = nil
	err := b.Add("dist/b.yaml", changed, nil)
	var dup *DuplicateError
	if !errors.As(err, &dup) || !strings.Contains(err.Error(), "kubevirt 1.9.0 build 4 is built twice with different content (dist/a.yaml and dist/b.yaml)") {
		t.Fatalf("Add of a different record of the same build = %v", err)
	}
}

func TestMerge(t *testing.T) {
	signer, _ := GenerateKey(nil)
	base := buildIndex(t, record("kubevirt", "1.9.0", 4), record("cdi", "1.66.1", 1))
	base.Expires = testTime.Add(time.Hour)
	data, _ := base.Marshal()
	sigs, _ := Sign(data, signer)
	sig, _ := MarshalSignatures(sigs)
	v, err := Verify(data, sig, &Trust{IndexKeys: []*PublicKey{signer.Public()}}, VerifyOptions{Now: testTime.Add(2 * time.Hour), AllowExpired: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], "index expired") {
		t.Fatalf("an expired base is a warning for merging, got %q", v.Warnings)
	}

	b := NewBuilder()
	vsig, _ := SignVersion(record("kubevirt", "1.9.0", 4), signer)
	if err := b.Add("a", record("kubevirt", "1.9.0", 4), []Signature{vsig}); err != nil { // same build again
		t.Fatal(err)
	}
	if err := b.Add("x", record("kubevirt", "1.9.1", 4), []Signature{{KeyID: strings.Repeat("a", 64), Sig: "x"}}); err == nil || !strings.Contains(err.Error(), "x: signature is not the standard base64") {
		t.Fatalf("Add with a malformed signature = %v", err)
	}
	b.Add("b", record("kubevirt", "1.10.0", 1), nil)
	built, _ := b.Index(testTime.Add(time.Minute))
	x, err := Merge(v, built)
	if err != nil {
		t.Fatal(err)
	}
	if p, n := x.Counts(); p != 2 || n != 3 {
		t.Fatalf("merged index has %d packages, %d versions; want 2, 3", p, n)
	}
	if vs := x.Packages["kubevirt"].Versions; vs[0].Version != "1.10.0" || len(vs[1].Signatures) != 1 {
		t.Fatalf("merged versions %+v", vs)
	}

	changed := record("kubevirt", "1.9.0", 4)
	changed.Spec.Images = []string{"registry.example.com/other@" + testDigest(9)}
	b = NewBuilder()
	b.Add("c", changed, nil)
	built, _ = b.Index(testTime.Add(time.Minute))
	_, err = Merge(v, built)
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("Merge of a changed build = %v, want a *ConflictError", err)
	}
	d1, _ := record("kubevirt", "1.9.0", 4).Spec.Digest()
	d2, _ := changed.Spec.Digest()
	want := "kubevirt 1.9.0 build 4 is already published with different content (published " + d1 + ", built " + d2 + "); published versions do not change, give the recipe a new build number"
	if err.Error() != want {
		t.Fatalf("conflict message:\n got %s\nwant %s", err, want)
	}

	older, _ := NewBuilder().Index(testTime.Add(-time.Hour))
	if _, err := Merge(v, older); err == nil || !strings.Contains(err.Error(), "rollback") {
		t.Fatalf("Merge of an index generated before its base = %v", err)
	}
	if _, err := Merge(&Verified{}, built); err == nil {
		t.Fatal("Merge over an unverified base must fail")
	}
}

func TestParseRecord(t *testing.T) {
	rec := record("kubevirt", "1.9.0", 4)
	b, _ := sigsyaml.Marshal(rec)
	got, err := ParseRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := rec.Spec.Digest()
	d2, _ := got.Spec.Digest()
	if d1 != d2 || got.Metadata.Name != "kubevirt" {
		t.Fatalf("ParseRecord lost content")
	}
	for _, doc := range []string{
		"apiVersion: kbuild.dev/v1\nkind: BuildInfo\npackage: kubevirt\nbuild: 4\n",
		"apiVersion: kbuild.dev/v1\nbuild: 4\nkind: BuildInfo\nsources:\n- {name: a}\n",
		"signatures: []\n",
	} {
		if _, err := ParseRecord([]byte(doc)); !errors.Is(err, ErrNotRecord) {
			t.Errorf("ParseRecord(%q) = %v, want ErrNotRecord", doc, err)
		}
	}
	if _, err := ParseRecord(append(b, "extra: 1\n"...)); err == nil || errors.Is(err, ErrNotRecord) || !strings.Contains(err.Error(), "extra") {
		t.Errorf("a record with an unknown field: %v", err)
	}
}

// TestCompactBuilder checks that a compact Builder writes the same bytes as
// a full one and as Merge, with signatures, a base index, long folded
// strings and non-ASCII text (the yaml.v2 fallback).
func TestCompactBuilder(t *testing.T) {
	k := newTestKeys(t)
	rng := rand.New(rand.NewSource(9))
	var recs []*PackageSource
	for p := 0; p < 6; p++ {
		for v := 0; v < 5; v++ {
			r := record(fmt.Sprintf("pkg-%d", p), fmt.Sprintf("1.%d.0", v), 1+v%2)
			r.Spec.Variants[0].Components[0].Install.WaitStrategy = randString(rng)
			r.Spec.Images = append(r.Spec.Images, randString(rng))
			if v == 3 {
				r.Metadata.Annotations[DescriptionAnnotation] = "ünïcödé description\nwith a newline"
			}
			recs = append(recs, r)
		}
	}
	add := func(b *Builder, rs []*PackageSource) {
		for i, r := range rs {
			var sigs []Signature
			if i%3 == 0 {
				s, _ := SignVersion(r, k.team)
				sigs = []Signature{s}
			}
			if err := b.Add(fmt.Sprint(i), r, sigs); err != nil {
				t.Fatal(err)
			}
		}
	}
	full, compact := NewBuilder(), NewBuilder(Compact())
	add(full, recs)
	add(compact, recs)
	exp := testTime.Add(time.Hour)
	want, err := full.Marshal(testTime, exp)
	if err != nil {
		t.Fatal(err)
	}
	got, err := compact.Marshal(testTime, exp)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("compact Marshal differs:\n%s", firstDiff(got, want))
	}
	x, _ := full.Index(testTime)
	x.Expires = exp
	if viaSigs, _ := sigsyaml.Marshal(x); !bytes.Equal(want, viaSigs) {
		t.Fatalf("Builder.Marshal differs from sigs.k8s.io/yaml:\n%s", firstDiff(want, viaSigs))
	}
	if _, err := compact.Index(testTime); err == nil {
		t.Error("Index of a compact Builder must fail")
	}

	// Over a base: the first half published, the second half new, one
	// published version built again with a new signature.
	baseB := NewBuilder()
	add(baseB, recs[:15])
	baseData, _ := baseB.Marshal(testTime, exp)
	base, err := Verify(baseData, sigFile(t, baseData, k.index), &Trust{IndexKeys: pubs(k.index)}, VerifyOptions{Now: testTime})
	if err != nil {
		t.Fatal(err)
	}
	later := testTime.Add(time.Minute)
	builtB := NewBuilder()
	add(builtB, recs[14:])
	built, _ := builtB.Index(later)
	built.Expires = exp
	merged, err := Merge(base, built)
	if err != nil {
		t.Fatal(err)
	}
	want, _ = merged.Marshal()
	cb := NewBuilder(Compact())
	if err := AddBase(cb, base); err != nil {
		t.Fatal(err)
	}
	add(cb, recs[14:])
	got, err = cb.Marshal(later, exp)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("compact merge differs from Merge:\n%s", firstDiff(got, want))
	}
	// The same, verifying and adding the base in one pass.
	cv := NewBuilder(Compact())
	if _, err := AddVerified(cv, baseData, sigFile(t, baseData, k.index), &Trust{IndexKeys: pubs(k.index)}, VerifyOptions{Now: testTime}); err != nil {
		t.Fatal(err)
	}
	add(cv, recs[14:])
	if got, err = cv.Marshal(later, exp); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("AddVerified differs from Merge: %v\n%s", err, firstDiff(got, want))
	}
	if _, err := AddVerified(NewBuilder(Compact()), baseData, sigFile(t, baseData, k.stranger), &Trust{IndexKeys: pubs(k.index)}, VerifyOptions{Now: testTime}); !errors.As(err, new(*VerificationError)) {
		t.Fatalf("AddVerified of a base signed by a stranger = %v", err)
	}
	if _, err := cb.Marshal(testTime.Add(-time.Hour), exp); err == nil || !strings.Contains(err.Error(), "rollback") {
		t.Errorf("Marshal before the base's generated time = %v", err)
	}
	changed := record("pkg-0", "1.0.0", 1)
	changed.Spec.Images = nil
	if err := cb.Add("changed.yaml", changed, nil); !errors.As(err, new(*ConflictError)) {
		t.Errorf("Add of a changed published version = %v, want a *ConflictError", err)
	}
}

// TestAddRecordInPlace checks that a compact Builder keeps nothing of the
// bytes AddRecord parses in place, by overwriting them after each call.
func TestAddRecordInPlace(t *testing.T) {
	var want []byte
	{
		b := NewBuilder()
		for v := 0; v < 4; v++ {
			if err := b.Add("r", record("kubevirt", fmt.Sprintf("1.%d.0", v), 1), nil); err != nil {
				t.Fatal(err)
			}
		}
		want, _ = b.Marshal(testTime, time.Time{})
	}
	b := NewBuilder(Compact())
	buf := make([]byte, 0, 8192)
	for v := 0; v < 4; v++ {
		rec, _ := MarshalRecord(record("kubevirt", fmt.Sprintf("1.%d.0", v), 1))
		buf = append(buf[:0], rec...)
		if err := b.AddRecord("r", buf, nil); err != nil {
			t.Fatal(err)
		}
		for i := range buf {
			buf[i] = 'X'
		}
	}
	dup, _ := MarshalRecord(record("kubevirt", "1.0.0", 1))
	changed := strings.Replace(string(dup), "v1.0.0", "v9.9.9", 1)
	buf = append(buf[:0], changed...)
	err := b.AddRecord("other", buf, nil)
	for i := range buf {
		buf[i] = 'X'
	}
	if err == nil || !strings.Contains(err.Error(), "kubevirt 1.0.0 build 1 is built twice") {
		t.Fatalf("duplicate: %v", err)
	}
	got, err := b.Marshal(testTime, time.Time{})
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("compact index from reused buffers differs: %v\n%s", err, firstDiff(got, want))
	}
	if err := b.AddRecord("info", []byte("apiVersion: kbuild.dev/v1\nkind: BuildInfo\n"), nil); !errors.Is(err, ErrNotRecord) {
		t.Fatalf("AddRecord of a BuildInfo = %v", err)
	}
}

func TestBuilderWriteTo(t *testing.T) {
	for _, opts := range [][]BuilderOption{nil, {Compact()}} {
		b := NewBuilder(opts...)
		for v := 0; v < 3; v++ {
			b.Add("r", record("kubevirt", fmt.Sprintf("1.%d.0", v), 1), nil)
		}
		want, err := b.Marshal(testTime, testTime.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		n, err := b.WriteTo(&buf, testTime, testTime.Add(time.Hour))
		if err != nil || n != int64(len(want)) || !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("WriteTo = %d, %v; differs from Marshal", n, err)
		}
	}
}

// TestParsersRefuseAliasesAndSize: every parser caps its input and refuses
// YAML anchors and aliases (a billion-laughs document expands to
// gigabytes).
func TestParsersRefuseAliasesAndSize(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
	parsers := map[string]func([]byte) error{
		"ParseIndex":      func(b []byte) error { _, err := ParseIndex(b); return err },
		"ParseRoot":       func(b []byte) error { _, err := ParseRoot(b); return err },
		"ParseSignatures": func(b []byte) error { _, err := ParseSignatures(b); return err },
		"ParseRecord":     func(b []byte) error { _, err := ParseRecord(b); return err },
	}
	for name, parse := range parsers {
		if err := parse([]byte(bomb)); err == nil || !strings.Contains(err.Error(), "anchors and aliases are not allowed") {
			t.Errorf("%s of an alias bomb = %v", name, err)
		}
	}
	for name, tc := range map[string]struct {
		parse func([]byte) error
		max   int
	}{
		"ParseRoot":       {parsers["ParseRoot"], MaxRootSize},
		"ParseSignatures": {parsers["ParseSignatures"], MaxSignaturesSize},
		"ParseRecord":     {parsers["ParseRecord"], MaxRecordSize},
	} {
		if err := tc.parse(make([]byte, tc.max+1)); err == nil || !strings.Contains(err.Error(), "more than the") {
			t.Errorf("%s of %d bytes = %v", name, tc.max+1, err)
		}
	}
}
