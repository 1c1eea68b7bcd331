package index

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"kbuild.dev/kbuild/spec"
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

// TestIndexGolden pins the bytes of an index, which are also what
// sigs.k8s.io/yaml writes, and its ordering rules: packages in yaml.v2 key
// order, versions newest first by semver precedence then build.
func TestIndexGolden(t *testing.T) {
	kv := record("kubevirt", "1.9.0", 4)
	kv.Spec.Variants[0].Requires = []spec.Requirement{{Package: "cdi", Version: ">=1.2 <2"}}
	kv.Spec.Permissions = &spec.Permissions{ClusterWide: true, Rules: []spec.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}}
	kv.Spec.Variants[0].Components[0].Install.HealthCheckExprs = []spec.HealthCheck{{APIVersion: "kubevirt.io/v1", Kind: "KubeVirt",
		Current: "has(self.status) && self.status.conditions.exists(c, c.type == 'Available' && c.status == 'True')"}}
	kv.Spec.Variants[0].Components[0].Install.ReadyWhen = []spec.ReadyWhen{{APIVersion: "kubevirt.io/v1", Kind: "KubeVirt", Name: "kubevirt", Namespace: "kubevirt", Condition: "Available", Status: "True"}}
	recs := []*spec.PackageSource{
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

func TestBuilderErrors(t *testing.T) {
	withPath := record("kubevirt", "1.9.0", 4)
	withPath.Spec.Variants[0].Components[0].Path = "charts/operator"
	tests := []struct {
		name string
		rec  *spec.PackageSource
		want string
		is   error
	}{
		{"bad name", record("Kube_Virt", "1.9.0", 1), "not a DNS-1123 label", nil},
		{"leading v", record("kubevirt", "v1.9.0", 1), `version starts with "v"; kbuild writes 1.9.0`, nil},
		{"build 0", record("kubevirt", "1.9.0", 0), "build is 0, want 1 or more", nil},
		{"path component", withPath, `uses path "charts/operator"; in a repository every component names a chart pinned by digest`, ErrUnbuiltComponent},
		{"wrong kind", &spec.PackageSource{APIVersion: spec.RecordAPIVersion, Kind: "Recipe"}, `kind is "Recipe"`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := NewBuilder().Add("dist/x.yaml", tc.rec, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "dist/x.yaml: ") {
				t.Fatalf("Add = %v, want an error naming the file and containing %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("Add = %v, want it to wrap %v", err, tc.is)
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

// TestRendered checks that a Rendered index is the bytes of Marshal,
// written by several goroutines at once, and that it stays the same after
// its Builder is changed and Reset.
func TestRendered(t *testing.T) {
	for _, opts := range [][]BuilderOption{nil, {Compact()}} {
		b := NewBuilder(opts...)
		for v := 0; v < 5; v++ {
			if err := b.Add("r", record("kubevirt", fmt.Sprintf("1.%d.0", v), 1), nil); err != nil {
				t.Fatal(err)
			}
			if err := b.Add("r", record("cdi", fmt.Sprintf("1.%d.0", v), 2), nil); err != nil {
				t.Fatal(err)
			}
		}
		want, err := b.Marshal(testTime, testTime.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		r, err := b.Render(testTime, testTime.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if r.Size() != int64(len(want)) {
			t.Errorf("Size = %d, want %d", r.Size(), len(want))
		}
		b.Add("r", record("kubevirt", "2.0.0", 1), nil)
		b.Reset()
		got := make([]bytes.Buffer, 4)
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() {
				if n, err := r.WriteTo(&got[i]); err != nil || n != int64(len(want)) {
					t.Errorf("WriteTo = %d, %v; want %d bytes", n, err, len(want))
				}
			})
		}
		wg.Wait()
		for i := range got {
			if !bytes.Equal(got[i].Bytes(), want) {
				t.Fatalf("WriteTo %d differs from Marshal: %s", i, firstDiff(got[i].Bytes(), want))
			}
		}
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
		r, err := b.Render(testTime, testTime.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		n, err := r.WriteTo(&buf)
		if err != nil || n != int64(len(want)) || !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("WriteTo = %d, %v; differs from Marshal", n, err)
		}
	}
}

// TestPeekKind checks the quick look at a document's kind that decides
// whether it is a record before it is parsed.
func TestPeekKind(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		kind string
		ok   bool
	}{
		{"apiVersion: kubepkg.dev/v1\nkind: PackageSource\nmetadata:\n  name: x\n", "PackageSource", true},
		{"---\nkind: BuildInfo\npackage: x\n", "BuildInfo", true},
		{"kind:   Notes  \nitems: [a, b]\n", "Notes", true},
		{"# a comment\n\nkind: Notes", "Notes", true},
		{"metadata:\n  kind: Nested\n", "", false},
		{"kind: Notes\nkind: Twice\n", "", false},
		{"kind: \"quoted\"\n", "", false},
		{"kind: 12\n", "", false},
		{"kind:Notes\n", "", false},
		{"kind: [a]\n", "", false},
		{"? complex\n: key\n", "", false},
		{"\"kind\": Notes\n", "", false},
		{"---\nkind: A\n---\nkind: B\n", "", false},
		{"", "", false},
	} {
		kind, ok := peekKind([]byte(tc.doc))
		if kind != tc.kind || ok != tc.ok {
			t.Errorf("peekKind(%q) = %q, %v; want %q, %v", tc.doc, kind, ok, tc.kind, tc.ok)
		}
	}
}
