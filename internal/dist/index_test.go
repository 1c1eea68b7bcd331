package dist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

func record(name, version string, build int, chart string) *spec.PackageSource {
	return &spec.PackageSource{
		APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind,
		Metadata: spec.RecordMetadata{Name: name},
		Spec: spec.PackageSpec{Version: version, Build: build, Variants: []spec.Variant{{Name: "default", Components: []spec.Component{{Name: "c",
			Chart: &spec.ChartRef{Repository: "oci://r/" + name, Name: "c", Version: fmt.Sprintf("%s-%d", version, build), Digest: "sha256:" + strings.Repeat(chart, 64)}}}}}},
	}
}

func write(t *testing.T, p string, rec *spec.PackageSource) {
	t.Helper()
	b, err := index.MarshalRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAdd(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "kubevirt-1.9.0-4.yaml"), record("kubevirt", "1.9.0", 4, "a"))
	write(t, filepath.Join(dir, "nested", "cdi-1.66.1-1.yml"), record("cdi", "1.66.1", 1, "b"))
	write(t, filepath.Join(dir, "oci", "stray.yaml"), record("stray", "1.0.0", 1, "c"))
	write(t, filepath.Join(dir, ".hidden", "stray.yaml"), record("hidden", "1.0.0", 1, "c"))
	os.WriteFile(filepath.Join(dir, "kubevirt-1.9.0-4.build.yaml"), []byte("apiVersion: kbuild.dev/v1\nkind: BuildInfo\npackage: kubevirt\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.yaml"), []byte("kind: Notes\nitems: [a, b]\n"), 0o644)
	k, _ := trust.GenerateKey(nil)
	sig, _ := trust.SignVersion(record("kubevirt", "1.9.0", 4, "a"), k)
	side, _ := index.MarshalSignatureList([]index.Signature{sig})
	os.WriteFile(filepath.Join(dir, "kubevirt-1.9.0-4.sig.yaml"), side, 0o644)

	for _, opts := range [][]index.BuilderOption{nil, {index.Compact()}} {
		b := index.NewBuilder(opts...)
		if err := Add(context.Background(), b, dir); err != nil {
			t.Fatal(err)
		}
		if p, v := b.Counts(); p != 2 || v != 2 {
			t.Fatalf("%d packages, %d versions; want kubevirt and cdi only", p, v)
		}
		data, err := b.Marshal(time.Unix(1791633600, 0), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "signatures:\n      - keyid: "+k.KeyID()) {
			t.Errorf("the sidecar's signature is not in the index:\n%s", data)
		}
	}
	b := index.NewBuilder()
	if err := Add(context.Background(), b, dir); err != nil {
		t.Fatal(err)
	}
	x, err := b.Index(time.Unix(1791633600, 0))
	if err != nil || len(x.Packages) != 2 {
		t.Fatalf("Add, then Index = %v, %v", x, err)
	}

	// Every broken record is reported, with its file.
	os.WriteFile(filepath.Join(dir, "broken-1.0.0-1.yaml"), []byte("apiVersion: kubepkg.dev/v1\nkind: PackageSource\nspec:\n  version: [\n"), 0o644)
	changed := record("kubevirt", "1.9.0", 4, "d")
	write(t, filepath.Join(dir, "copy", "kubevirt-1.9.0-4.yaml"), changed)
	err = Add(context.Background(), index.NewBuilder(index.Compact()), dir)
	if err == nil || !strings.Contains(err.Error(), "build record "+filepath.Join(dir, "broken-1.0.0-1.yaml")) {
		t.Errorf("broken record: %v", err)
	}
	var dup *index.DuplicateError
	if !errors.As(err, &dup) {
		t.Errorf("a record of the same build with other content: %v", err)
	}
}

func TestAddPinning(t *testing.T) {
	pinned := "sha256:" + strings.Repeat("e", 64)
	for _, tc := range []struct {
		name    string
		records map[string]*spec.PackageSource // file name → record; a chart "" has no digest
		pinErr  error
		want    []string // charts pinned, "repository name version", sorted
		wantErr string
	}{
		{name: "every chart pinned already", records: map[string]*spec.PackageSource{
			"a-1.0.0-1.yaml": record("a", "1.0.0", 1, "a"), "b-1.0.0-1.yaml": record("b", "1.0.0", 1, "b"),
		}},
		{name: "charts without digest", records: map[string]*spec.PackageSource{
			"a-1.0.0-1.yaml": record("a", "1.0.0", 1, ""), "a-1.1.0-1.yaml": record("a", "1.1.0", 1, ""), "b-1.0.0-1.yaml": record("b", "1.0.0", 1, "b"),
		}, want: []string{"oci://r/a c 1.0.0-1", "oci://r/a c 1.1.0-1"}},
		{name: "the pin fails", records: map[string]*spec.PackageSource{"a-1.0.0-1.yaml": record("a", "1.0.0", 1, "")},
			pinErr: errors.New("no such chart"), want: []string{"oci://r/a c 1.0.0-1"}, wantErr: "a-1.0.0-1.yaml: chart c 1.0.0-1: no such chart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for f, rec := range tc.records {
				if c := rec.Spec.Variants[0].Components[0].Chart; c.Digest == "sha256:" {
					c.Digest = ""
				}
				write(t, filepath.Join(dir, f), rec)
			}
			var mu sync.Mutex
			var got []*spec.ChartRef
			pin := func(_ context.Context, c *spec.ChartRef) error {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, c) // kept past the call: its strings must be its own
				if tc.pinErr != nil {
					return tc.pinErr
				}
				c.Digest = pinned
				return nil
			}
			b := index.NewBuilder(index.Compact())
			err := AddPinning(context.Background(), b, dir, pin)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("AddPinning = %v, want an error containing %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			var calls []string
			for _, c := range got {
				calls = append(calls, c.Repository+" "+c.Name+" "+c.Version)
			}
			sort.Strings(calls)
			if strings.Join(calls, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("pinned %q, want %q", calls, tc.want)
			}
			if err != nil {
				return
			}
			data, err := b.Marshal(time.Unix(1791633600, 0), time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(data), "digest: "+pinned); n != len(tc.want) {
				t.Errorf("the index holds the pinned digest %d times, want %d:\n%s", n, len(tc.want), data)
			}
			// Without a pinner a chart without a digest is refused.
			if len(tc.want) > 0 {
				if err := Add(context.Background(), index.NewBuilder(index.Compact()), dir); err == nil {
					t.Errorf("Add of a record whose chart has no digest succeeded")
				}
			}
		})
	}
}

// TestListerOrder checks that a record is paired with its sidecar
// whichever of the two a directory lists first: sent with it, or sent
// alone and again with it.
func TestListerOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []string // a trailing / marks a directory
		want    []string // jobs: record, or record+sidecar
		subdirs []string
	}{
		{"sidecar first", []string{"a.sig.yaml", "a.yaml"}, []string{"d/a.yaml+d/a.sig.yaml"}, nil},
		{"record first", []string{"a.yaml", "a.sig.yaml"}, []string{"d/a.yaml", "d/a.yaml+d/a.sig.yaml"}, nil},
		{"yml record", []string{"b.yml", "b.sig.yaml"}, []string{"d/b.yml", "d/b.yml+d/b.sig.yaml"}, nil},
		{"no sidecar", []string{"a.yaml", "b.yaml"}, []string{"d/a.yaml", "d/b.yaml"}, nil},
		{"sidecar without record", []string{"a.sig.yaml"}, nil, nil},
		{"sidecar seen once", []string{"a.yaml", "a.sig.yaml", "a.sig.yaml"}, []string{"d/a.yaml", "d/a.yaml+d/a.sig.yaml"}, nil},
		{"other files", []string{"a.build.yaml", "notes.txt", "c.yaml"}, []string{"d/c.yaml"}, nil},
		{"directories", []string{"sub/", ".hidden/", "x.yaml/", "e.yaml"}, []string{"d/e.yaml"}, []string{"d/sub", "d/x.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs := make(chan job, 16)
			l := newLister("d", jobs)
			for _, e := range tc.entries {
				name, isDir := strings.CutSuffix(e, "/")
				l.entry(name, isDir)
			}
			close(jobs)
			var got []string
			for j := range jobs {
				s := filepath.ToSlash(j.record)
				if j.sidecar != "" {
					s += "+" + filepath.ToSlash(j.sidecar)
				}
				got = append(got, s)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("jobs = %q, want %q", got, tc.want)
			}
			var subdirs []string
			for _, s := range l.subdirs {
				subdirs = append(subdirs, filepath.ToSlash(s))
			}
			if fmt.Sprint(subdirs) != fmt.Sprint(tc.subdirs) {
				t.Errorf("subdirectories = %q, want %q", subdirs, tc.subdirs)
			}
		})
	}
}

// TestAddSidecars indexes many records, every third with a sidecar, in
// nested directories: whatever order the file system lists them in, each
// version has exactly its sidecar's signature, and nothing else.
func TestAddSidecars(t *testing.T) {
	dir := t.TempDir()
	k, _ := trust.GenerateKey(nil)
	want := 0
	for i := 0; i < 300; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("group-%d", i%3))
		if i%3 == 0 {
			sub = dir
		}
		rec := record(fmt.Sprintf("pkg-%03d", i), "1.0.0", 1, "a")
		write(t, filepath.Join(sub, fmt.Sprintf("pkg-%03d-1.0.0-1.yaml", i)), rec)
		if i%3 == 1 {
			sig, _ := trust.SignVersion(rec, k)
			side, _ := index.MarshalSignatureList([]index.Signature{sig})
			os.WriteFile(filepath.Join(sub, fmt.Sprintf("pkg-%03d-1.0.0-1.sig.yaml", i)), side, 0o644)
			want++
		}
	}
	b := index.NewBuilder(index.Compact())
	if err := Add(context.Background(), b, dir); err != nil {
		t.Fatal(err)
	}
	if p, v := b.Counts(); p != 300 || v != 300 {
		t.Fatalf("%d packages, %d versions; want 300 of each", p, v)
	}
	data, err := b.Marshal(time.Unix(1791633600, 0), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "- keyid: "+k.KeyID()); n != want {
		t.Errorf("the index holds %d signatures, want %d (one per sidecar)", n, want)
	}
}
