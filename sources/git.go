package sources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"kbuild.dev/kbuild/internal/tailbuffer"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/spec"
)

var hex40 = regexp.MustCompile(`^[0-9a-f]{40}$`)

// gitRef records which cached blob holds a git tree: a tar made by git
// archive of path at commit. Tree is the git tree id of that path.
type gitRef struct {
	URL    string `json:"url"`
	Commit string `json:"commit"`
	Path   string `json:"path,omitempty"`
	Tree   string `json:"tree"`
	Blob   string `json:"blob"`
}

func gitRefKey(g *recipe.GitSource) string {
	return filepath.Join("git", strings.ToLower(g.Commit)+"-"+keyOf(strings.Trim(g.Path, "/")))
}

// fetchGit resolves a git source: the tree at path of one commit, fetched
// shallowly with the system git and cached as a tar keyed by commit and
// path (the ref also records the git tree id), so rebuilds work offline.
func (f *Fetcher) fetchGit(ctx context.Context, recipeDir, out string, g *recipe.GitSource) (*Result, error) {
	lower := *g
	lower.Commit = strings.ToLower(g.Commit) // git prints commit ids in lower case
	g = &lower
	if !hex40.MatchString(g.Commit) {
		return nil, fmt.Errorf("git commit %q is not a full 40-hex commit id", g.Commit)
	}
	if g.URL == "" || strings.HasPrefix(g.URL, "-") {
		return nil, fmt.Errorf("git url %q is not a repository URL", g.URL)
	}
	p := strings.Trim(g.Path, "/")
	if p != "" && !filepath.IsLocal(filepath.FromSlash(p)) {
		return nil, fmt.Errorf("git path %q leaves the repository: %w", g.Path, ErrUnsafe)
	}
	origin := redact(g.URL) + "@" + g.Commit
	if p != "" {
		origin += ":" + p
	}
	key := gitRefKey(g)
	var ref gitRef
	b, err := f.cache.readRef(key)
	if err == nil && json.Unmarshal(b, &ref) == nil && f.cache.has(ref.Blob) {
		f.logf("git %s: using cached tree %s", origin, ref.Tree)
	} else {
		if f.offline {
			return nil, f.offlineError(recipeDir, "git "+origin)
		}
		if ref, err = f.gitFetch(ctx, g, p, filepath.Dir(out)); err != nil {
			return nil, fmt.Errorf("git %s: %w", origin, scrubbed{err, g.URL})
		}
		b, _ := json.Marshal(ref)
		if err := f.cache.writeRef(key, b); err != nil {
			return nil, err
		}
	}
	blob, err := f.cache.open(ref.Blob)
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", origin, err)
	}
	defer blob.Close()
	strip := 0
	if p != "" {
		strip = len(strings.Split(p, "/"))
	}
	if err := f.extractBlob(ctx, blob, ref.Blob, out, extractOptions{strip: strip}); err != nil {
		return nil, fmt.Errorf("git %s: %w", origin, err)
	}
	digest, err := HashDir(out)
	if err != nil {
		return nil, err
	}
	return &Result{Path: out, Resolved: spec.ResolvedSource{Kind: KindGit, Origin: origin, Digest: digest}}, nil
}

// gitFetch fetches one commit shallowly into a temporary bare repository
// under tmpParent, checks it, and stores `git archive` of path in the
// cache. Attributes are overridden so that export-ignore and export-subst
// in the repository cannot change the tree.
func (f *Fetcher) gitFetch(ctx context.Context, g *recipe.GitSource, p, tmpParent string) (gitRef, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*f.timeout)
	defer cancel()
	tmp, err := os.MkdirTemp(tmpParent, ".git-")
	if err != nil {
		return gitRef{}, err
	}
	defer os.RemoveAll(tmp)
	run := func(args ...string) (string, error) {
		stdout := tailbuffer.New(tailSize)
		err := f.runGit(ctx, tmp, stdout, args...)
		return strings.TrimSpace(stdout.String()), err
	}
	if _, err := run("init", "--bare", "-q"); err != nil {
		return gitRef{}, err
	}
	attrs := "* -export-ignore -export-subst\n"
	if err := os.WriteFile(filepath.Join(tmp, "info", "attributes"), []byte(attrs), 0o644); err != nil {
		return gitRef{}, err
	}
	f.logf("git fetch %s %s", redact(g.URL), g.Commit)
	lowSpeed := fmt.Sprintf("http.lowSpeedTime=%d", max(1, int(f.timeout.Seconds())))
	if _, err := run("-c", "http.lowSpeedLimit=1000", "-c", lowSpeed, "fetch", "--depth=1", "--no-tags", "-q", "--", g.URL, g.Commit); err != nil {
		return gitRef{}, err
	}
	got, err := run("rev-parse", "--verify", "-q", g.Commit+"^{commit}")
	if err != nil || got != g.Commit {
		return gitRef{}, fmt.Errorf("the fetched object is not commit %s (got %q)", g.Commit, got)
	}
	treeish := g.Commit + "^{tree}"
	if p != "" {
		treeish = g.Commit + ":" + p
	}
	tree, err := run("rev-parse", "--verify", "-q", treeish)
	if err != nil {
		return gitRef{}, fmt.Errorf("path %q does not exist at commit %s", p, g.Commit)
	}
	if typ, _ := run("cat-file", "-t", tree); typ != "tree" {
		return gitRef{}, fmt.Errorf("path %q at commit %s is a %s, not a directory", p, g.Commit, typ)
	}
	args := []string{"archive", "--format=tar", g.Commit}
	if p != "" {
		args = append(args, "--", p)
	}
	blob, err := f.gitArchive(ctx, tmp, args)
	if err != nil {
		return gitRef{}, err
	}
	return gitRef{URL: redact(g.URL), Commit: g.Commit, Path: p, Tree: tree, Blob: blob}, nil
}

// gitArchive runs git archive and streams its tar into the cache.
func (f *Fetcher) gitArchive(ctx context.Context, dir string, args []string) (string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd, stderr := f.command(ctx, dir, "git", args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("run git: %w", err)
	}
	digest, perr := f.cache.put(stdout, f.maxExtract, nil)
	if perr != nil {
		cancel()
	}
	werr := cmd.Wait()
	switch {
	case errors.Is(perr, ErrTooLarge):
		return "", fmt.Errorf("the tree is larger than the extract limit of %d bytes: %w", f.maxExtract, perr)
	case perr != nil:
		return "", perr
	case werr != nil:
		return "", commandError(ctx, "git archive", werr, stderr)
	}
	return digest, nil
}

// runGit runs git in dir with a restricted environment: no terminal
// prompts and only the file, git, http, https and ssh transports (so
// that ext:: URLs cannot run commands).
func (f *Fetcher) runGit(ctx context.Context, dir string, stdout *tailbuffer.Buffer, args ...string) error {
	cmd, stderr := f.command(ctx, dir, "git", args...)
	cmd.Stdout = stdout
	if err := cmd.Run(); err != nil {
		sub := args[0]
		for i := 0; i+1 < len(args) && args[i] == "-c"; i += 2 {
			sub = args[i+2]
		}
		return commandError(ctx, "git "+sub, err, stderr)
	}
	return nil
}

// scrubbed hides the password of a URL in an error's message (git may
// echo the URL it was given).
type scrubbed struct {
	err    error
	rawURL string
}

func (s scrubbed) Error() string {
	msg := s.err.Error()
	if pass := urlPassword(s.rawURL); pass != "" {
		msg = strings.ReplaceAll(msg, pass, "xxxxx")
	}
	return msg
}

func (s scrubbed) Unwrap() error { return s.err }

func gitEnv() []string {
	return append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ALLOW_PROTOCOL=file:git:http:https:ssh", "GIT_ASKPASS=true")
}
