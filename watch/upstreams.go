package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	yaml "go.yaml.in/yaml/v3"

	"kbuild.dev/kbuild/internal/yamlbound"
)

// helmIndex is a Helm repository index as the look-ups keep it: each
// chart's versions.
type helmIndex map[string][]Candidate

// helm lists a chart's versions in a Helm repository's index.yaml. An
// index is read once per Looker, however many charts of it are looked up.
func (l *Looker) helm(ctx context.Context, h *HelmUpstream) ([]Candidate, error) {
	u := strings.TrimSuffix(h.Repository, "/") + "/index.yaml"
	l.mu.Lock()
	e := l.indexes[u]
	if e == nil {
		e = &indexEntry{}
		l.indexes[u] = e
	}
	l.mu.Unlock()
	e.once.Do(func() { e.idx, e.err = l.readHelmIndex(ctx, u) })
	if e.err != nil {
		return nil, e.err
	}
	entries, ok := e.idx[h.Chart]
	if !ok {
		return nil, fmt.Errorf("%s lists no chart %q (%d charts)", redact(u), h.Chart, len(e.idx))
	}
	return entries, nil
}

// indexEntry is one index read, or being read.
type indexEntry struct {
	once sync.Once
	idx  helmIndex
	err  error
}

func (l *Looker) readHelmIndex(ctx context.Context, u string) (helmIndex, error) {
	data, _, err := get(ctx, l.client, u, l.limits.Bytes, nil)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", redact(u), err)
	}
	if err := yamlbound.Check(&doc, len(data)); err != nil {
		return nil, fmt.Errorf("%s: %w", redact(u), err)
	}
	var idx struct {
		Entries map[string][]struct {
			Version    string `yaml:"version"`
			AppVersion string `yaml:"appVersion"`
			Digest     string `yaml:"digest"`
		} `yaml:"entries"`
	}
	if err := doc.Decode(&idx); err != nil {
		return nil, fmt.Errorf("%s: not a Helm repository index: %w", redact(u), err)
	}
	out := helmIndex{}
	for name, entries := range idx.Entries {
		cs := make([]Candidate, 0, len(entries))
		for _, e := range entries {
			d := e.Digest
			if d != "" && !strings.HasPrefix(d, "sha256:") {
				d = "sha256:" + d
			}
			cs = append(cs, Candidate{Tag: e.Version, Digest: d, AppVersion: e.AppVersion})
		}
		out[name] = cs
	}
	return out, nil
}

// oci lists the tags of an OCI repository, page by page (the Link
// header), at most Limits.Pages pages.
func (l *Looker) oci(ctx context.Context, o *OCIUpstream) ([]Candidate, error) {
	ref := strings.TrimPrefix(o.Repository, "oci://")
	opts := []name.Option{name.WeakValidation}
	if r, err := name.NewRepository(ref, opts...); err == nil && l.plain.Allows(r.RegistryStr()) {
		opts = append(opts, name.Insecure)
	}
	repo, err := name.NewRepository(ref, opts...)
	if err != nil {
		return nil, err
	}
	p, err := remote.NewPuller(remote.WithContext(ctx), remote.WithTransport(l.rt), remote.WithAuthFromKeychain(l.keychain),
		remote.WithRetryBackoff(remote.Backoff{Steps: 1}))
	if err != nil {
		return nil, err
	}
	lister, err := p.Lister(ctx, repo)
	if err != nil {
		return nil, err
	}
	var out []Candidate
	for pages := 0; lister.HasNext(); pages++ {
		if pages >= l.limits.Pages {
			return nil, fmt.Errorf("the tag list goes on past %d pages: %w", l.limits.Pages, ErrTooManyPages)
		}
		page, err := lister.Next(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range page.Tags {
			out = append(out, Candidate{Tag: t})
		}
		if len(out) > l.limits.Names {
			return nil, fmt.Errorf("more than %d tags: %w", l.limits.Names, ErrTooLarge)
		}
	}
	return out, nil
}

// gitTags lists the tags of a git repository with git ls-remote, each
// with the commit it points at (an annotated tag's peeled commit).
func (l *Looker) gitTags(ctx context.Context, g *GitUpstream) ([]Candidate, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*l.idle)
	defer cancel()
	lowSpeed := fmt.Sprintf("http.lowSpeedTime=%d", max(1, int(l.idle.Seconds())))
	cmd := exec.CommandContext(ctx, l.git, "-c", "http.lowSpeedLimit=1000", "-c", lowSpeed, "ls-remote", "--tags", "--", g.URL)
	cmd.Env = append(cmd.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ALLOW_PROTOCOL=file:git:http:https:ssh", "GIT_ASKPASS=true")
	out := &capped{limit: l.limits.Bytes}
	var stderr capped
	stderr.limit = 8 << 10
	cmd.Stdout, cmd.Stderr = out, &stderr
	err := cmd.Run()
	switch {
	case out.over:
		return nil, fmt.Errorf("git ls-remote printed more than the limit of %d bytes: %w", l.limits.Bytes, ErrTooLarge)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("git ls-remote: no answer within %s: %w", 20*l.idle, ctx.Err())
	case err != nil:
		return nil, fmt.Errorf("git ls-remote: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	commits := map[string]string{}
	var order []string
	for _, line := range strings.Split(out.String(), "\n") {
		sha, ref, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		tag, ok := strings.CutPrefix(ref, "refs/tags/")
		if !ok {
			continue
		}
		if t, peeled := strings.CutSuffix(tag, "^{}"); peeled {
			commits[t] = sha
			continue
		}
		if _, seen := commits[tag]; !seen {
			commits[tag] = sha
			order = append(order, tag)
		}
	}
	res := make([]Candidate, 0, len(order))
	for _, t := range order {
		res = append(res, Candidate{Tag: t, Commit: commits[t]})
	}
	return res, nil
}

// capped is a buffer that keeps at most limit bytes and notes more.
type capped struct {
	bytes.Buffer
	limit int64
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if int64(c.Len()+len(p)) > c.limit {
		c.over = true
		return 0, ErrTooLarge
	}
	return c.Buffer.Write(p)
}

// github lists a repository's releases, 100 a page, following the Link
// header's rel="next" on the same host, at most Limits.Pages pages.
// Drafts are skipped; a release marked prerelease is one.
func (l *Looker) github(ctx context.Context, g *GitHubUpstream) ([]Candidate, error) {
	api := strings.TrimSuffix(g.API, "/")
	if api == "" {
		api = "https://api.github.com"
	}
	next := api + "/repos/" + g.Repository + "/releases?per_page=100"
	hdr := http.Header{"Accept": {"application/vnd.github+json"}}
	if tok := githubToken(api); tok != "" {
		hdr.Set("Authorization", "Bearer "+tok)
	}
	var out []Candidate
	for pages := 0; next != ""; pages++ {
		if pages >= l.limits.Pages {
			return nil, fmt.Errorf("the releases go on past %d pages: %w", l.limits.Pages, ErrTooManyPages)
		}
		body, h, err := get(ctx, l.client, next, l.limits.Bytes, hdr)
		if err != nil {
			return nil, err
		}
		var releases []struct {
			TagName    string `json:"tag_name"`
			Draft      bool   `json:"draft"`
			Prerelease bool   `json:"prerelease"`
			Assets     []struct {
				Name   string `json:"name"`
				URL    string `json:"browser_download_url"`
				Size   int64  `json:"size"`
				Digest string `json:"digest"`
			} `json:"assets"`
		}
		if err := json.Unmarshal(body, &releases); err != nil {
			return nil, fmt.Errorf("%s: not a list of releases: %w", redact(next), err)
		}
		for _, r := range releases {
			if r.Draft {
				continue
			}
			c := Candidate{Tag: r.TagName, Prerelease: r.Prerelease, Assets: map[string]Asset{}}
			for _, a := range r.Assets {
				c.Assets[a.Name] = Asset{URL: a.URL, Digest: a.Digest, Size: a.Size}
			}
			out = append(out, c)
		}
		if len(out) > l.limits.Names {
			return nil, fmt.Errorf("more than %d releases: %w", l.limits.Names, ErrTooLarge)
		}
		if next, err = nextLink(next, h.Get("Link")); err != nil {
			return nil, err
		}
	}
	return out, nil
}

var linkRe = regexp.MustCompile(`<([^>]*)>\s*;\s*rel="?next"?`)

// nextLink returns the rel="next" URL of a Link header, resolved against
// cur; one on another host is refused with ErrRedirect.
func nextLink(cur, header string) (string, error) {
	m := linkRe.FindStringSubmatch(header)
	if m == nil {
		return "", nil
	}
	base, err := url.Parse(cur)
	if err != nil {
		return "", err
	}
	n, err := base.Parse(m[1])
	if err != nil {
		return "", fmt.Errorf("the Link header of %s: %w", redact(cur), err)
	}
	if n.Scheme != base.Scheme || !strings.EqualFold(n.Host, base.Host) {
		return "", fmt.Errorf("the next page of %s is on another host, %s: %w", redact(cur), n.Redacted(), ErrRedirect)
	}
	return n.String(), nil
}

var hrefRe = regexp.MustCompile(`(?i)href\s*=\s*["']([^"'<>]*)["']`)

// listing lists the entries of an HTTP directory listing: the last path
// element of every link on the page, directories' without their slash.
func (l *Looker) listing(ctx context.Context, li *ListingUpstream) ([]Candidate, error) {
	body, _, err := get(ctx, l.client, li.URL, l.limits.Bytes, nil)
	if err != nil {
		return nil, err
	}
	base, err := url.Parse(li.URL)
	if err != nil {
		return nil, err
	}
	var out []Candidate
	seen := map[string]bool{}
	for rest := body; ; {
		m := hrefRe.FindSubmatchIndex(rest)
		if m == nil {
			break
		}
		href := rest[m[2]:m[3]]
		rest = rest[m[1]:]
		ref, err := base.Parse(html.UnescapeString(string(href)))
		if err != nil || ref.Host != base.Host {
			continue
		}
		n := path.Base(strings.TrimSuffix(ref.Path, "/"))
		if n == "." || n == "/" || n == ".." || seen[n] || ref.Path == base.Path {
			continue
		}
		seen[n] = true
		out = append(out, Candidate{Tag: n, Assets: map[string]Asset{n: {URL: ref.String()}}})
		if len(out) > l.limits.Names {
			return nil, fmt.Errorf("more than %d entries: %w", l.limits.Names, ErrTooLarge)
		}
	}
	return out, nil
}

// GitTag returns the commit tag points at in the git repository at url
// (an annotated tag's peeled commit).
func (l *Looker) GitTag(ctx context.Context, url, tag string) (string, error) {
	if l.offline {
		return "", fmt.Errorf("git %s: %w", redact(url), ErrOffline)
	}
	tags, err := l.gitTags(ctx, &GitUpstream{URL: url})
	if err != nil {
		return "", fmt.Errorf("git %s: %w", redact(url), err)
	}
	for _, c := range tags {
		if c.Tag == tag {
			return c.Commit, nil
		}
	}
	return "", fmt.Errorf("git %s has no tag %q", redact(url), tag)
}
