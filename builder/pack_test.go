package builder

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeChart(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var testChart = map[string]string{
	"Chart.yaml":                "apiVersion: v2\nname: demo\nversion: 1.0.0-1\n",
	"values.yaml":               "a: 1\n",
	"templates/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
	"templates/notes.swp":       "editor junk",
	".helmignore":               "*.swp\n",
	"charts/sub/Chart.yaml":     "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
	"charts/sub/templates/a.md": "x",
}

// TestPackReproducible packs the same chart written at different times with
// different modes and umask: the bytes must not change.
func TestPackReproducible(t *testing.T) {
	epoch := time.Unix(1700000000, 0)
	a, b := t.TempDir(), t.TempDir()
	writeChart(t, a, testChart)
	writeChart(t, b, testChart)
	old := time.Unix(1, 0)
	filepath.Walk(b, func(p string, fi os.FileInfo, err error) error {
		os.Chtimes(p, old, old)
		if !fi.IsDir() {
			os.Chmod(p, 0o600)
		}
		return nil
	})
	pa, err := Pack(a, "demo", "1.0.0-1", epoch)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := Pack(b, "demo", "1.0.0-1", epoch)
	if err != nil {
		t.Fatal(err)
	}
	if pa.Digest != pb.Digest || !bytes.Equal(pa.Data, pb.Data) {
		t.Fatalf("Pack digests differ: %s vs %s", pa.Digest, pb.Digest)
	}
	pc, err := Pack(a, "demo", "1.0.0-1", epoch.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if pc.Digest == pa.Digest {
		t.Errorf("Pack ignores the epoch: same digest for different SOURCE_DATE_EPOCH")
	}
}

func TestPackLayout(t *testing.T) {
	dir := t.TempDir()
	writeChart(t, dir, testChart)
	if err := os.Chmod(filepath.Join(dir, "values.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	epoch := time.Unix(1700000000, 0)
	a, err := Pack(dir, "demo", "1.0.0-1", epoch)
	if err != nil {
		t.Fatal(err)
	}
	if a.Data[3] != 0 || !bytes.Equal(a.Data[4:8], []byte{0, 0, 0, 0}) {
		t.Errorf("gzip header flags %x mtime %x, want no name and no time", a.Data[3], a.Data[4:8])
	}
	zr, err := gzip.NewReader(bytes.NewReader(a.Data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(epoch) || h.Typeflag != tar.TypeReg {
			t.Errorf("%s: uid %d gid %d uname %q gname %q mtime %v type %c", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime, h.Typeflag)
		}
		wantMode := int64(0o644)
		if h.Name == "demo/values.yaml" {
			wantMode = 0o755
		}
		if h.Mode != wantMode {
			t.Errorf("%s: mode %o, want %o", h.Name, h.Mode, wantMode)
		}
	}
	want := "demo/.helmignore demo/Chart.yaml demo/charts/sub/Chart.yaml demo/charts/sub/templates/a.md demo/templates/cm.yaml demo/values.yaml"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("entries = %s\nwant      %s", got, want)
	}
}

func TestPackRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	writeChart(t, dir, testChart)
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "templates", "passwd")); err != nil {
		t.Fatal(err)
	}
	if _, err := Pack(dir, "demo", "1.0.0-1", time.Unix(0, 0)); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Fatalf("Pack = %v, want a symlink error", err)
	}
}

func TestSourceDateEpoch(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"", 0, false}, {"1700000000", 1700000000, false}, {"-1", 0, true}, {"12abc", 0, true}, {"1.5", 0, true},
	} {
		got, err := SourceDateEpoch(func(string) string { return tc.in })
		if (err != nil) != tc.wantErr || (err == nil && got.Unix() != tc.want) {
			t.Errorf("SourceDateEpoch(%q) = %v, %v; want %d, err %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func BenchmarkPack(b *testing.B) {
	dir := b.TempDir()
	files := map[string]string{"Chart.yaml": "apiVersion: v2\nname: demo\nversion: 1.0.0\n"}
	for i := 0; i < 50; i++ {
		files[filepath.Join("templates", "f"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+".yaml")] = strings.Repeat("key: value\n", 400)
	}
	writeChart(b, dir, files)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Pack(dir, "demo", "1.0.0", time.Unix(0, 0)); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCompareArchives(t *testing.T) {
	epoch := time.Unix(0, 0)
	dir := t.TempDir()
	writeChart(t, dir, testChart)
	a, err := Pack(dir, "demo", "1.0.0-1", epoch)
	if err != nil {
		t.Fatal(err)
	}
	later, _ := Pack(dir, "demo", "1.0.0-1", epoch.Add(time.Hour))
	writeChart(t, dir, map[string]string{"templates/cm.yaml": "changed\n", "templates/new.yaml": "x"})
	b, _ := Pack(dir, "demo", "1.0.0-1", epoch)
	for _, tc := range []struct {
		name       string
		x, y       []byte
		file, want string
	}{
		{"same", a.Data, a.Data, "", ""},
		{"only times differ", a.Data, later.Data, "", ""},
		{"changed and added", a.Data, b.Data, "demo/templates/cm.yaml", "content differs"},
		{"missing", b.Data, a.Data, "demo/templates/cm.yaml", "content differs"},
	} {
		file, how, err := CompareArchives(tc.x, tc.y)
		if err != nil || file != tc.file || !strings.Contains(how, tc.want) {
			t.Errorf("%s: CompareArchives = %q, %q, %v; want %q, %q", tc.name, file, how, err, tc.file, tc.want)
		}
	}
}

// TestPackTreeMatchesPack: a chart packed from memory has the bytes of the
// same chart written to a directory and packed from there, whatever its
// .helmignore says (names, paths, directories, negations, the defaults)
// and with executable files and empty directories.
func TestPackTreeMatchesPack(t *testing.T) {
	files := map[string]string{
		"Chart.yaml":                 "apiVersion: v2\nname: demo\nversion: 1.0.0-1\n",
		"values.yaml":                "a: 1\n",
		"templates/cm.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
		"templates/.hidden.yaml":     "dotfile in templates/: ignored by Helm's defaults",
		"templates/notes.swp":        "editor junk",
		"templates/tests/t.yaml":     "test",
		"docs/keep/README.md":        "kept by a negation",
		"docs/drop/README.md":        "dropped",
		"ci/values.yaml":             "ci",
		"charts/sub/Chart.yaml":      "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
		"charts/sub/templates/a.md":  "x",
		"charts/sub/ci/x.yaml":       "nested ci",
		"scripts/run.sh":             "#!/bin/sh\n",
		"files/tests/not-a-dir-rule": "x",
	}
	for _, tc := range []struct{ name, ignore string }{
		{"none", ""},
		{"name glob", "*.swp\n*.md\n"},
		{"directory rule", "tests/\nci/\n"},
		{"rooted path", "/ci\ndocs/drop\n"},
		{"negations", "docs/*\n!docs/keep\n"},
		{"negated directory rule", "!tests/\n"},
		{"comments and blanks", "# a comment\n\n  *.sh  \n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all := maps.Clone(files)
			if tc.ignore != "" {
				all[".helmignore"] = tc.ignore
			}
			dir := t.TempDir()
			writeChart(t, dir, all)
			if err := os.Chmod(filepath.Join(dir, "scripts/run.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "empty/dir"), 0o755); err != nil {
				t.Fatal(err)
			}
			tree, err := readTree(dir)
			if err != nil {
				t.Fatal(err)
			}
			epoch := time.Unix(1700000000, 0)
			want, err := Pack(dir, "demo", "1.0.0-1", epoch)
			if err != nil {
				t.Fatal(err)
			}
			got, err := packTree(tree, "demo", "1.0.0-1", epoch)
			if err != nil {
				t.Fatal(err)
			}
			if got.Digest != want.Digest {
				file, how, _ := CompareArchives(want.Data, got.Data)
				t.Fatalf("packTree digest %s, Pack of the directory %s: %s %s", got.Digest, want.Digest, file, how)
			}
		})
	}
}
