package sources

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/recipe"
)

// gitRepo is a bare repository with two commits, served by git
// http-backend (through net/http/cgi, so requests can be counted).
type gitRepo struct {
	bare       string // path of the bare repository
	url        string // http URL of it
	first, tip string // commit ids
	count      *counter
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE=2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2024-01-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func newGitRepo(t testing.TB) *gitRepo {
	t.Helper()
	root := t.TempDir()
	work := filepath.Join(root, "work")
	os.Mkdir(work, 0o755)
	git(t, work, "init", "-q", "-b", "main")
	writeFiles(t, work, map[string]string{
		"README.md":                    "v1\n",
		"deploy/chart/Chart.yaml":      "apiVersion: v2\nname: demo\nversion: 1.0.0\n",
		"deploy/chart/templates/a.yml": "kind: ConfigMap\n",
		"deploy/chart/hook.sh":         "#!/bin/sh\n",
		"deploy/chart/.gitattributes":  "templates/a.yml export-ignore\nREADME.md export-subst\n",
	})
	os.Symlink("Chart.yaml", filepath.Join(work, "deploy/chart/link"))
	git(t, work, "add", ".")
	git(t, work, "commit", "-qm", "first")
	r := &gitRepo{first: git(t, work, "rev-parse", "HEAD")}
	writeFiles(t, work, map[string]string{"README.md": "v2\n", "deploy/chart/Chart.yaml": "apiVersion: v2\nname: demo\nversion: 2.0.0\n"})
	git(t, work, "commit", "-qam", "second")
	r.tip = git(t, work, "rev-parse", "HEAD")
	r.bare = filepath.Join(root, "repo.git")
	git(t, root, "clone", "-q", "--bare", work, r.bare)

	backend := &cgi.Handler{
		Path: filepath.Join(gitExecPath(t), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	srv, count := serve(t, backend)
	r.url, r.count = srv.URL+"/repo.git", count
	return r
}

func gitExecPath(t testing.TB) string {
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skipf("git not available: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func TestFetchGit(t *testing.T) {
	repo := newGitRepo(t)
	chartAtFirst := map[string]string{
		"Chart.yaml":      "f:apiVersion: v2\nname: demo\nversion: 1.0.0\n",
		"templates":       "d",
		"templates/a.yml": "f:kind: ConfigMap\n", // export-ignore has no effect
		"hook.sh":         "x:#!/bin/sh\n",
		"link":            "l:Chart.yaml",
		".gitattributes":  "f:templates/a.yml export-ignore\nREADME.md export-subst\n",
	}
	cacheDir := t.TempDir()
	for _, tc := range []struct {
		name   string
		commit string
		path   string
		want   map[string]string
	}{
		{"older commit, subtree", repo.first, "deploy/chart", chartAtFirst},
		{"tip, whole tree", repo.tip, "", nil},
		{"upper-case commit id", strings.ToUpper(repo.tip), "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cacheDir := cacheDir
			if tc.commit != strings.ToLower(tc.commit) {
				cacheDir = t.TempDir() // the lower-case id is cached already
			}
			src := recipe.Source{Git: &recipe.GitSource{URL: repo.url, Commit: tc.commit, Path: tc.path}}
			repo.count.reset()
			res, err := withCache(t, cacheDir).Fetch(context.Background(), "r", t.TempDir(), "g", src, PluginInfo{})
			if err != nil {
				t.Fatal(err)
			}
			if repo.count.reset() == 0 {
				t.Error("first fetch made no requests")
			}
			got := tree(t, res.Path)
			if tc.want != nil {
				sameTree(t, got, tc.want)
			} else if got["README.md"] != "f:v2\n" || got["deploy/chart/Chart.yaml"] != "f:apiVersion: v2\nname: demo\nversion: 2.0.0\n" {
				t.Errorf("tip tree = %v", got)
			}
			origin := repo.url + "@" + strings.ToLower(tc.commit)
			if tc.path != "" {
				origin += ":" + tc.path
			}
			if d, _ := HashDir(res.Path); res.Resolved.Kind != "git" || res.Resolved.Origin != origin || res.Resolved.Digest != d {
				t.Errorf("Resolved = %+v, want git %s %s", res.Resolved, origin, d)
			}
			// Offline, from the cache: the same tree and digest, no request.
			off := withCache(t, cacheDir, WithOffline(true))
			again, err := off.Fetch(context.Background(), "r", t.TempDir(), "g", src, PluginInfo{})
			if err != nil {
				t.Fatalf("offline Fetch: %v", err)
			}
			if again.Resolved.Digest != res.Resolved.Digest {
				t.Errorf("offline digest %s, want %s", again.Resolved.Digest, res.Resolved.Digest)
			}
			if n := repo.count.reset(); n != 0 {
				t.Errorf("offline fetch made %d requests", n)
			}
		})
	}
}

func TestFetchGitErrors(t *testing.T) {
	repo := newGitRepo(t)
	pwned := filepath.Join(t.TempDir(), "pwned")
	hang, _ := net.Listen("tcp", "127.0.0.1:0")
	t.Cleanup(func() { hang.Close() })
	go func() {
		for {
			c, err := hang.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold the connection open, say nothing
		}
	}()
	missing := strings.Repeat("0", 40)
	for _, tc := range []struct {
		name   string
		git    recipe.GitSource
		opts   []Option
		target error
		msg    []string
	}{
		{"unknown commit", recipe.GitSource{URL: repo.url, Commit: missing}, nil, nil, []string{"git " + repo.url + "@" + missing, "git fetch", "its output ends"}},
		{"missing path", recipe.GitSource{URL: repo.url, Commit: repo.tip, Path: "nope"}, nil, nil, []string{`path "nope" does not exist`}},
		{"path is a file", recipe.GitSource{URL: repo.url, Commit: repo.tip, Path: "README.md"}, nil, nil, []string{"is a blob, not a directory"}},
		{"path leaves", recipe.GitSource{URL: repo.url, Commit: repo.tip, Path: "../x"}, nil, ErrUnsafe, []string{"leaves the repository"}},
		{"short commit", recipe.GitSource{URL: repo.url, Commit: repo.tip[:12]}, nil, nil, []string{"not a full 40-hex commit id"}},
		{"option as URL", recipe.GitSource{URL: "--upload-pack=touch " + pwned, Commit: repo.tip}, nil, nil, []string{"not a repository URL"}},
		{"ext transport", recipe.GitSource{URL: "ext::sh -c touch% " + pwned, Commit: repo.tip}, nil, nil, []string{"transport 'ext' not allowed"}},
		{"server hangs", recipe.GitSource{URL: "http://" + hang.Addr().String() + "/r.git", Commit: repo.tip}, []Option{WithTimeout(time.Second)}, nil, []string{"Operation too slow"}},
		{"credentials hidden", recipe.GitSource{URL: "http://user:hunter2@" + repo.url[len("http://"):] + "-missing", Commit: repo.tip}, nil, nil, []string{"git http://user:xxxxx@"}},
		{"credentials hidden in a bad URL", recipe.GitSource{URL: "http://user:hunter2@" + hang.Addr().String() + "x/r.git", Commit: repo.tip}, nil, nil, []string{"git http://user:xxxxx@"}},
		{"offline", recipe.GitSource{URL: repo.url, Commit: repo.tip}, []Option{WithOffline(true)}, ErrOffline, []string{"git " + repo.url + "@" + repo.tip}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			work := t.TempDir()
			_, err := newFetcher(t, tc.opts...).Fetch(context.Background(), "r", work, "g", recipe.Source{Git: &tc.git}, PluginInfo{})
			wantErr(t, err, tc.target, tc.msg...)
			if errors.Is(tc.target, ErrOffline) {
				wantNotCached(t, err, NotCachedError{Recipe: "r"})
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error shows the password: %v", err)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %s", d)
			}
			if _, err := os.Stat(pwned); err == nil {
				t.Fatal("the git URL ran a command")
			}
			if left, _ := filepath.Glob(filepath.Join(work, ".git-*")); len(left) > 0 {
				t.Errorf("temporary repositories left behind: %v", left)
			}
		})
	}
}

// TestFetchGitDaemon fetches from a repository served by git daemon.
func TestFetchGitDaemon(t *testing.T) {
	repo := newGitRepo(t)
	port := testenv.GitDaemon(t, filepath.Dir(repo.bare))
	url := fmt.Sprintf("git://127.0.0.1:%d/repo.git", port)
	src := recipe.Source{Git: &recipe.GitSource{URL: url, Commit: repo.first, Path: "deploy/chart"}}
	res, err := newFetcher(t).Fetch(context.Background(), "r", t.TempDir(), "g", src, PluginInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tree(t, res.Path)["Chart.yaml"]; got != "f:apiVersion: v2\nname: demo\nversion: 1.0.0\n" {
		t.Errorf("Chart.yaml = %q", got)
	}
}
