package patches

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestOverlay(t *testing.T) {
	chart := copyTree(t, "testdata/overlay/chart")
	if err := Overlay(chart, "testdata/overlay/overlay"); err != nil {
		t.Fatalf("Overlay = %v", err)
	}
	for file, want := range map[string]string{
		"Chart.yaml":                           "apiVersion: v2\nname: demo\nversion: 0.1.0\n", // untouched
		"templates/deploy.yaml":                "kind: Deployment # ours\n",                    // replaced
		"templates/netpol.yaml":                "kind: NetworkPolicy # added\n",                // added
		"files/conf/app.conf":                  "key = value\n",                                // added with its directories
		"templates/tests/test-connection.yaml": "kind: Pod # test\n",
	} {
		if got := readString(t, filepath.Join(chart, file)); got != want {
			t.Errorf("after Overlay %s = %q, want %q", file, got, want)
		}
	}
}

// TestOverlayHostile builds overlays and charts with symlinks and clashes
// that must be refused or handled without writing outside the chart.
func TestOverlayHostile(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup populates the overlay and chart directories; outside is a
		// directory beside them holding secret.txt.
		setup   func(t *testing.T, overlay, chart, outside string)
		wantErr string
		check   func(t *testing.T, chart, outside string)
	}{
		{
			name: "symlink to a file inside the overlay is copied as a file",
			setup: func(t *testing.T, overlay, chart, outside string) {
				write(t, filepath.Join(overlay, "real.yaml"), "real\n")
				symlink(t, "real.yaml", filepath.Join(overlay, "link.yaml"))
			},
			check: func(t *testing.T, chart, outside string) {
				if fi, err := os.Lstat(filepath.Join(chart, "link.yaml")); err != nil || !fi.Mode().IsRegular() {
					t.Errorf("link.yaml in chart: %v, %v; want a regular file", fi, err)
				}
				if got := readString(t, filepath.Join(chart, "link.yaml")); got != "real\n" {
					t.Errorf("link.yaml = %q, want real", got)
				}
			},
		},
		{
			name: "absolute symlink outside the overlay",
			setup: func(t *testing.T, overlay, chart, outside string) {
				write(t, filepath.Join(overlay, "a.yaml"), "a\n")
				symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(overlay, "values.yaml"))
			},
			wantErr: "values.yaml: symlink points to",
			check: func(t *testing.T, chart, outside string) {
				if _, err := os.Stat(filepath.Join(chart, "a.yaml")); err == nil {
					t.Errorf("Overlay copied a.yaml although the overlay was refused")
				}
			},
		},
		{
			name: "relative symlink climbing out of the overlay",
			setup: func(t *testing.T, overlay, chart, outside string) {
				os.MkdirAll(filepath.Join(overlay, "templates"), 0o755)
				symlink(t, "../../outside/secret.txt", filepath.Join(overlay, "templates", "x.yaml"))
			},
			wantErr: "outside the overlay directory",
		},
		{
			name: "symlink to a directory",
			setup: func(t *testing.T, overlay, chart, outside string) {
				os.MkdirAll(filepath.Join(overlay, "dir"), 0o755)
				symlink(t, "dir", filepath.Join(overlay, "alias"))
			},
			wantErr: "symlink does not point to a regular file",
		},
		{
			name: "chart directory symlinked outside",
			setup: func(t *testing.T, overlay, chart, outside string) {
				write(t, filepath.Join(overlay, "templates", "x.yaml"), "x\n")
				symlink(t, outside, filepath.Join(chart, "templates"))
			},
			wantErr: "templates",
			check: func(t *testing.T, chart, outside string) {
				if _, err := os.Stat(filepath.Join(outside, "x.yaml")); err == nil {
					t.Errorf("Overlay wrote through a chart symlink into %s", outside)
				}
			},
		},
		{
			name: "chart file symlinked outside is replaced, not written through",
			setup: func(t *testing.T, overlay, chart, outside string) {
				write(t, filepath.Join(overlay, "values.yaml"), "ours: 1\n")
				symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(chart, "values.yaml"))
			},
			check: func(t *testing.T, chart, outside string) {
				if got := readString(t, filepath.Join(chart, "values.yaml")); got != "ours: 1\n" {
					t.Errorf("values.yaml = %q", got)
				}
			},
		},
		{
			name: "file over a directory",
			setup: func(t *testing.T, overlay, chart, outside string) {
				write(t, filepath.Join(overlay, "templates"), "oops\n")
				os.MkdirAll(filepath.Join(chart, "templates"), 0o755)
			},
			wantErr: "an overlay file cannot replace a directory",
		},
		{
			name:    "missing overlay",
			setup:   func(t *testing.T, overlay, chart, outside string) { os.RemoveAll(overlay) },
			wantErr: "overlay ",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			overlay, chart, outside := filepath.Join(base, "overlay"), filepath.Join(base, "chart"), filepath.Join(base, "outside")
			for _, d := range []string{overlay, chart, outside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			write(t, filepath.Join(outside, "secret.txt"), "secret\n")
			tc.setup(t, overlay, chart, outside)
			errMatch(t, Overlay(chart, overlay), tc.wantErr)
			if got := readString(t, filepath.Join(outside, "secret.txt")); got != "secret\n" {
				t.Errorf("file outside the chart changed to %q", got)
			}
			if tc.check != nil {
				tc.check(t, chart, outside)
			}
		})
	}
}

func TestRemove(t *testing.T) {
	all := tree(t, "testdata/overlay/chart")
	without := func(drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(f string) bool { return slices.Contains(drop, f) })
	}
	tests := []string{"templates/tests/test-connection.yaml", "templates/tests/test-db.yaml"}
	for _, tc := range []struct {
		name     string
		patterns []string
		want     []string
		wantErr  string
	}{
		{name: "files in a directory", patterns: []string{"templates/tests/*"}, want: without(tests...)},
		{name: "whole directory", patterns: []string{"templates/tests"}, want: without(tests...)},
		{name: "directory with trailing slash", patterns: []string{"templates/tests/"}, want: without(tests...)},
		{name: "overlapping patterns", patterns: []string{"templates/tests", "templates/tests/test-*.yaml"}, want: without(tests...)},
		{name: "glob by extension", patterns: []string{"templates/*.txt", "README.md"}, want: without("templates/NOTES.txt", "README.md")},
		{name: "no patterns", want: all},
		{name: "matches nothing", patterns: []string{"README.md", "templates/test/*"}, wantErr: `remove "templates/test/*": matches no file`},
		{name: "parent directory", patterns: []string{"../outside/*"}, wantErr: "not a relative slash-separated path inside the chart"},
		{name: "dot dot inside", patterns: []string{"templates/../../x"}, wantErr: "not a relative slash-separated path"},
		{name: "absolute", patterns: []string{"/etc/passwd"}, wantErr: "not a relative slash-separated path"},
		{name: "the chart itself", patterns: []string{"."}, wantErr: "not a relative slash-separated path"},
		{name: "empty", patterns: []string{""}, wantErr: "not a relative slash-separated path"},
		{name: "bad pattern", patterns: []string{"templates/[a"}, wantErr: "syntax error in pattern"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chart := copyTree(t, "testdata/overlay/chart")
			err := Remove(chart, tc.patterns)
			if errMatch(t, err, tc.wantErr) {
				if got := tree(t, chart); !slices.Equal(got, all) {
					t.Errorf("Remove failed but removed files: left %q", got)
				}
				return
			}
			if got := tree(t, chart); !slices.Equal(got, tc.want) {
				t.Errorf("Remove(%q) left %q, want %q", tc.patterns, got, tc.want)
			}
		})
	}
}

func TestRemoveThroughSymlink(t *testing.T) {
	base := t.TempDir()
	chart, outside := filepath.Join(base, "chart"), filepath.Join(base, "outside")
	write(t, filepath.Join(outside, "secret.txt"), "secret\n")
	write(t, filepath.Join(chart, "Chart.yaml"), "name: x\n")
	symlink(t, outside, filepath.Join(chart, "link"))

	errMatch(t, Remove(chart, []string{"link/*"}), `remove "link/*": matches no file`)
	if err := Remove(chart, []string{"link"}); err != nil {
		t.Fatalf("Remove(link) = %v", err)
	}
	if _, err := os.Lstat(filepath.Join(chart, "link")); err == nil {
		t.Errorf("link still in the chart")
	}
	if got := readString(t, filepath.Join(outside, "secret.txt")); got != "secret\n" {
		t.Errorf("file outside the chart changed to %q", got)
	}
}

// copyTree copies the directory src into a new temporary directory.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func write(t *testing.T, file, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

func readString(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}
