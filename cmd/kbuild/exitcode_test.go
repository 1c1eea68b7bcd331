package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitStatus runs the kbuild binary into each documented exit status:
// a usage error (2, the error and one line pointing to --help, not the
// whole help), refused input (3), a verification failure (4) and a site
// that is unavailable (5: nothing listening, and a server answering 503),
// so CI can retry only what is worth retrying.
func TestExitStatus(t *testing.T) {
	dir := t.TempDir()
	if r := kbuild(t, dir, nil, "repo", "keygen", "index"); r.code != 0 {
		t.Fatalf("keygen: %s", r)
	}
	if r := kbuild(t, dir, nil, "repo", "keygen", "other"); r.code != 0 {
		t.Fatalf("keygen: %s", r)
	}
	// A signed site, and a recipe over the size limit.
	if err := os.MkdirAll(filepath.Join(dir, "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := kbuild(t, dir, nil, "repo", "index", "dist", "-o", "site/index.yaml", "--sign-key", "index.key"); r.code != 0 {
		t.Fatalf("repo index: %s", r)
	}
	big := filepath.Join(dir, "recipes", "big")
	if err := os.MkdirAll(big, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(big, "recipe.yaml"), []byte("kind: Recipe\n#"+strings.Repeat("x", 5<<20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.tar"), []byte("not a bundle"), 0o644); err != nil {
		t.Fatal(err)
	}
	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "try later", http.StatusServiceUnavailable)
	}))
	defer unavailable.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/index.yaml"
	l.Close()

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown flag", []string{"build", "--nope"}, exitUsage, "kbuild build: unknown flag: --nope\nRun 'kbuild build --help' for usage and examples.\n"},
		{"arguments that do not fit", []string{"repo", "keygen"}, exitUsage, "kbuild repo keygen: keygen takes one PREFIX\nRun 'kbuild repo keygen --help' for usage and examples.\n"},
		{"missing keys", []string{"repo", "verify", "--index", "site"}, exitUsage, "kbuild repo verify: verify needs --public-key or --root-key (one of them)\nRun 'kbuild repo verify --help' for usage and examples.\n"},
		{"recipe over its size limit", []string{"build", "recipes/big"}, exitRefused, ""},
		{"not a bundle", []string{"bundle", "inspect", "bad.tar"}, exitRefused, ""},
		{"index signed by another key", []string{"repo", "verify", "--index", "site", "--public-key", "other.pub"}, exitVerification, ""},
		{"nothing listening", []string{"repo", "verify", "--index", closed, "--public-key", "index.pub"}, exitUnavailable, ""},
		{"server answers 503", []string{"repo", "verify", "--index", unavailable.URL + "/index.yaml", "--public-key", "index.pub"}, exitUnavailable, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := kbuild(t, dir, nil, tc.args...)
			if r.code != tc.code {
				t.Errorf("kbuild %s: exit %d, want %d\n%s", strings.Join(tc.args, " "), r.code, tc.code, r)
			}
			if tc.want != "" && r.stderr != tc.want {
				t.Errorf("kbuild %s: stderr\n%s\nwant\n%s", strings.Join(tc.args, " "), r.stderr, tc.want)
			}
		})
	}
}

// TestHelpExitStatus: every command's --help ends with the exit statuses.
func TestHelpExitStatus(t *testing.T) {
	var walk func(c *Command, path []string)
	walk = func(c *Command, path []string) {
		for _, sub := range c.Subcommands {
			walk(sub, append(append([]string{}, path...), sub.Name()))
		}
		if len(c.Subcommands) > 0 {
			return
		}
		r := runInProcess(append(path[1:], "--help")...)
		if !strings.HasSuffix(r.stdout, exitStatusHelp+"\n") {
			t.Errorf("%s --help does not end with the exit statuses:\n%s", strings.Join(path, " "), r.stdout)
		}
	}
	walk(&Command{Use: "kbuild", Subcommands: commands()}, []string{"kbuild"})
	if r := runInProcess("--help"); !strings.Contains(r.stdout, exitStatusHelp) {
		t.Errorf("kbuild --help lacks the exit statuses:\n%s", r.stdout)
	}
}
