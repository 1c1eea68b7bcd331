package sources

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/spec"
)

// installPlugins writes shell scripts into a directory put first on PATH.
func installPlugins(t *testing.T, scripts map[string]string) {
	t.Helper()
	bin := t.TempDir()
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func TestPlugin(t *testing.T) {
	installPlugins(t, map[string]string{
		"kubepkg-source-echo": `cat > "$KUBEPKG_OUT/with.json"
printf '%s|%s|%s|%s|%s' "$KUBEPKG_RECIPE_DIR" "$KUBEPKG_PACKAGE" "$KUBEPKG_VERSION" "$(pwd)" "$KUBEPKG_OUT" > "$KUBEPKG_OUT/env"
mkdir "$KUBEPKG_OUT/sub" && echo made > "$KUBEPKG_OUT/sub/f"
echo progress >&2
`,
		"kbuild-source-alt": `echo alt > "$KUBEPKG_OUT/alt"`,
	})
	recipeDir := t.TempDir()
	work := t.TempDir()
	src := recipe.Source{Plugin: "echo", With: json.RawMessage(`{"chart":"x","n":1}`)}
	res, err := newFetcher(t).Fetch(context.Background(), recipeDir, work, "gen", src, PluginInfo{Package: "demo", Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "gen")
	sameTree(t, tree(t, res.Path), map[string]string{
		"with.json": `f:{"chart":"x","n":1}`,
		"env":       "f:" + strings.Join([]string{recipeDir, "demo", "1.2.3", recipeDir, out}, "|"),
		"sub":       "d", "sub/f": "f:made\n",
	})
	d, _ := HashDir(out)
	if want := (spec.ResolvedSource{Name: "gen", Kind: "plugin", Origin: "echo", Digest: d}); res.Path != out || res.Resolved != want {
		t.Errorf("Result = %+v, want path %s and %+v", res, out, want)
	}

	res, err = newFetcher(t).Fetch(context.Background(), recipeDir, work, "gen", recipe.Source{Plugin: "alt"}, PluginInfo{})
	if err != nil {
		t.Fatalf("kbuild-source- prefix: %v", err)
	}
	sameTree(t, tree(t, res.Path), map[string]string{"alt": "f:alt\n"}) // the output directory starts fresh
}

func TestPluginErrors(t *testing.T) {
	installPlugins(t, map[string]string{
		"kubepkg-source-fail":    "i=0; while [ $i -lt 500 ]; do echo \"noise line $i\" >&2; i=$((i+1)); done; echo 'cannot reach upstream' >&2; exit 3",
		"kubepkg-source-slow":    "sleep 30 & sleep 30",
		"kubepkg-source-nothing": "echo did nothing >&2",
		"kubepkg-source-escape":  `ln -s /etc/passwd "$KUBEPKG_OUT/passwd"`,
	})
	for _, tc := range []struct {
		name string
		opts []Option
		msg  []string
	}{
		{"fail", nil, []string{"plugin ", "kubepkg-source-fail", "exit status 3", "cannot reach upstream"}},
		{"slow", []Option{WithPluginTimeout(300 * time.Millisecond)}, []string{"timed out after 300ms"}},
		{"nothing", nil, []string{"wrote nothing to KUBEPKG_OUT", "did nothing"}},
		{"escape", nil, []string{"symlink passwd", "outside"}},
		{"missing", nil, []string{"neither kubepkg-source-missing nor kbuild-source-missing is on PATH"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := newFetcher(t, tc.opts...).Fetch(context.Background(), t.TempDir(), t.TempDir(), "gen", recipe.Source{Plugin: tc.name}, PluginInfo{})
			wantErr(t, err, nil, tc.msg...)
			if len(err.Error()) > 5000 {
				t.Errorf("error is %d bytes long; only the tail of the output belongs in it", len(err.Error()))
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s: the plugin's process group was not killed", d)
			}
		})
	}
}
