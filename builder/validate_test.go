package builder

import (
	"path/filepath"
	"testing"
)

func TestCommonRoot(t *testing.T) {
	for _, tc := range []struct {
		dirs []string
		want string
	}{
		{nil, ""},
		{[]string{"recipes/redis"}, "recipes"},
		{[]string{"recipes/redis", "recipes/kubevirt"}, "recipes"},
		{[]string{"recipes/a/x", "recipes/b/y"}, "recipes"},
		{[]string{"recipes/redis", "more/kubevirt"}, "."},
		{[]string{"/src/recipes/redis", "/src/other/x"}, "/src"},
		{[]string{"/a/x", "/b/y"}, "/"},
		{[]string{"recipes/..x/y", "recipes/z"}, "recipes"},
	} {
		var dirs []string
		for _, d := range tc.dirs {
			dirs = append(dirs, filepath.FromSlash(d))
		}
		if got := CommonRoot(dirs); got != filepath.FromSlash(tc.want) {
			t.Errorf("CommonRoot(%q) = %q, want %q", tc.dirs, got, tc.want)
		}
	}
}
