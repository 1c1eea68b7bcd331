package sources

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/spec"
)

func TestFetchDir(t *testing.T) {
	root := t.TempDir()
	recipeDir := filepath.Join(root, "recipe")
	writeFiles(t, recipeDir, map[string]string{
		"charts/x/Chart.yaml":  "name: x\n",
		"charts/x/values.yaml": "{}\n",
		"charts/y/Chart.yaml":  "name: y\n",
		"shared/common.yaml":   "a: 1\n",
		"charts/z/Chart.yaml":  "name: z\n",
	})
	writeFiles(t, root, map[string]string{"outside/secret": "s3cret\n"})
	os.Symlink("../../shared/common.yaml", filepath.Join(recipeDir, "charts/y/common.yaml"))
	os.Symlink("../outside", filepath.Join(recipeDir, "escape"))
	os.Symlink("../../../outside/secret", filepath.Join(recipeDir, "charts/z/secret"))
	os.Symlink("x", filepath.Join(recipeDir, "charts/alias"))

	xDigest, _ := HashDir(filepath.Join(recipeDir, "charts/x"))
	for _, tc := range []struct {
		name, dir string
		want      string // Result.Path relative to the recipe dir; "" if an error
		msg       string
	}{
		{"plain", "charts/x", "charts/x", ""},
		{"trailing slash", "charts/x/", "charts/x", ""},
		{"symlink inside the recipe", "charts/y", "charts/y", ""},
		{"symlinked dir inside", "charts/alias", "charts/x", ""},
		{"dot-dot", "../outside", "", "leaves the recipe directory"},
		{"dot-dot inside", "charts/../../outside", "", "leaves the recipe directory"},
		{"absolute", filepath.Join(root, "outside"), "", "leaves the recipe directory"},
		{"symlink out", "escape", "", "outside the recipe directory"},
		{"symlink out inside the tree", "charts/z", "", "symlink secret resolves to"},
		{"missing", "charts/none", "", "no such file"},
		{"a file", "charts/x/Chart.yaml", "", "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := newFetcher(t, WithOffline(true)).Fetch(context.Background(), recipeDir, t.TempDir(), "d", recipe.Source{Dir: tc.dir}, PluginInfo{})
			if tc.want == "" {
				wantErr(t, err, nil, tc.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(recipeDir, tc.want)
			d, _ := HashDir(want)
			if res.Path != want || res.Resolved != (spec.ResolvedSource{Name: "d", Kind: "dir", Origin: tc.dir, Digest: d}) {
				t.Errorf("Result = %+v, want path %s, digest %s", res, want, d)
			}
			if tc.want == "charts/x" && d != xDigest {
				t.Errorf("digest %s, want %s", d, xDigest)
			}
		})
	}
}

func TestHashDir(t *testing.T) {
	build := func(t *testing.T, change func(dir string)) string {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"Chart.yaml": "name: x\n", "templates/a.yaml": "kind: A\n", "run.sh": "#!/bin/sh\n"})
		os.Mkdir(filepath.Join(dir, "empty"), 0o755)
		os.Symlink("Chart.yaml", filepath.Join(dir, "link"))
		if change != nil {
			change(dir)
		}
		d, err := HashDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// The digest of the base tree is part of the build record format: it
	// must not change between kbuild versions.
	const golden = "sha256:d57fcfe0cd86a24abded741996699553b038e49cef6fe33ca8ce8b058b932b72"
	base := build(t, nil)
	if base != golden {
		t.Errorf("HashDir(base tree) = %s, want %s", base, golden)
	}
	for _, tc := range []struct {
		name   string
		change func(dir string)
		same   bool
	}{
		{"mtime", func(d string) { os.Chtimes(filepath.Join(d, "Chart.yaml"), timeAgo, timeAgo) }, true},
		{"non-exec mode bits", func(d string) { os.Chmod(filepath.Join(d, "Chart.yaml"), 0o600) }, true},
		{"exec bit variant", func(d string) { os.Chmod(filepath.Join(d, "run.sh"), 0o700) }, true},
		{"content", func(d string) { os.WriteFile(filepath.Join(d, "Chart.yaml"), []byte("name: y\n"), 0o644) }, false},
		{"exec bit", func(d string) { os.Chmod(filepath.Join(d, "Chart.yaml"), 0o755) }, false},
		{"rename", func(d string) { os.Rename(filepath.Join(d, "templates/a.yaml"), filepath.Join(d, "templates/b.yaml")) }, false},
		{"empty dir", func(d string) { os.Remove(filepath.Join(d, "empty")) }, false},
		{"link target", func(d string) { os.Remove(filepath.Join(d, "link")); os.Symlink("run.sh", filepath.Join(d, "link")) }, false},
		{"link to copy", func(d string) {
			os.Remove(filepath.Join(d, "link"))
			os.WriteFile(filepath.Join(d, "link"), []byte("Chart.yaml"), 0o644)
		}, false},
		{"file moved into dir", func(d string) {
			os.Rename(filepath.Join(d, "run.sh"), filepath.Join(d, "empty/run.sh"))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := build(t, tc.change); (got == base) != tc.same {
				t.Errorf("HashDir after %s = %s, base %s; same = %v, want %v", tc.name, got, base, got == base, tc.same)
			}
		})
	}
	t.Run("fifo", func(t *testing.T) {
		dir := t.TempDir()
		if err := mkfifo(filepath.Join(dir, "p")); err != nil {
			t.Skip(err)
		}
		if _, err := HashDir(dir); err == nil {
			t.Error("HashDir accepted a FIFO")
		}
	})
}
