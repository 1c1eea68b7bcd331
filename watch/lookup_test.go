package watch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/internal/upstreamtest"
	"kbuild.dev/kbuild/recipe"
)

// versions returns the allowed versions of s, newest first.
func versions(s Selection) string {
	var out []string
	for _, c := range s.Allowed {
		out = append(out, c.Version)
	}
	return strings.Join(out, " ")
}

func mustLookup(t *testing.T, l *Looker, u Upstream) Selection {
	t.Helper()
	s, err := l.Lookup(context.Background(), u)
	if err != nil {
		t.Fatalf("Lookup(%s) = %v", Describe(u), err)
	}
	return s
}

// TestHelmUpstream reads a Helm repository index served over HTTP.
func TestHelmUpstream(t *testing.T) {
	repo := upstreamtest.HelmRepo(t, []upstreamtest.HelmChart{
		{Name: "redis", Version: "1.0.0", AppVersion: "7.0"},
		{Name: "redis", Version: "1.1.0", AppVersion: "7.2"},
		{Name: "redis", Version: "2.0.0-rc.1", AppVersion: "8.0"},
		{Name: "redis", Version: "2.0.0", AppVersion: "8.0", Lie: true},
		{Name: "other", Version: "9.0.0"},
	})
	l := NewLooker()
	for _, tc := range []struct {
		p    VersionPolicy
		want string
	}{
		{VersionPolicy{Constraint: "^1"}, "1.1.0 1.0.0"},
		{VersionPolicy{}, "2.0.0 1.1.0 1.0.0"},
		{VersionPolicy{Prerelease: "include", Constraint: ">=1.1"}, "2.0.0 2.0.0-rc.1 1.1.0"},
	} {
		s := mustLookup(t, l, Upstream{Helm: &HelmUpstream{Repository: repo, Chart: "redis"}, Versions: tc.p})
		if got := versions(s); got != tc.want {
			t.Errorf("%+v: versions = %q, want %q", tc.p, got, tc.want)
		}
	}
	s := mustLookup(t, l, Upstream{Helm: &HelmUpstream{Repository: repo, Chart: "redis"}, Versions: VersionPolicy{Constraint: "^1"}})
	if c, _ := s.Newest(); c.AppVersion != "7.2" || !strings.HasPrefix(c.Digest, "sha256:") {
		t.Errorf("newest = %+v, want appVersion 7.2 and a digest", c)
	}
	if _, err := l.Lookup(context.Background(), Upstream{Helm: &HelmUpstream{Repository: repo, Chart: "nope"}}); err == nil || !strings.Contains(err.Error(), `lists no chart "nope"`) {
		t.Errorf("missing chart: %v", err)
	}
}

// TestGitHubUpstream pages through a releases API (two a page), skips
// drafts, reads releases marked prerelease as pre-releases and keeps only
// releases with the assets asked for.
func TestGitHubUpstream(t *testing.T) {
	asset := map[string][]byte{"op.yaml": []byte("kind: ConfigMap\n")}
	api := upstreamtest.GitHubAPI(t, "kubevirt/kubevirt", []upstreamtest.Release{
		{Tag: "v1.10.0", Draft: true, Assets: asset},
		{Tag: "v1.9.3", Prerelease: true, Assets: asset},
		{Tag: "v1.9.2"}, // no assets yet
		{Tag: "v1.9.1", Assets: asset},
		{Tag: "v1.9.0", Assets: asset},
		{Tag: "v1.8.4", Assets: asset},
		{Tag: "nightly", Assets: asset},
	})
	l := NewLooker()
	gh := &GitHubUpstream{Repository: "kubevirt/kubevirt", API: api, Assets: []string{"op.yaml"}}
	s := mustLookup(t, l, Upstream{GitHub: gh, Versions: VersionPolicy{Strip: []string{"v"}, Constraint: "~1.9"}})
	if got, want := versions(s), "1.9.1 1.9.0"; got != want {
		t.Errorf("versions = %q, want %q", got, want)
	}
	if s.NotVersions != 1 {
		t.Errorf("NotVersions = %d, want 1 (nightly)", s.NotVersions)
	}
	c, _ := s.Newest()
	if a := c.Assets["op.yaml"]; a.Digest != upstreamtest.Digest(asset["op.yaml"]) || !strings.HasSuffix(a.URL, "/download/v1.9.1/op.yaml") {
		t.Errorf("asset = %+v", a)
	}
	s = mustLookup(t, l, Upstream{GitHub: gh, Versions: VersionPolicy{Strip: []string{"v"}, Constraint: "~1.9", Prerelease: "include"}})
	if got, want := versions(s), "1.9.3 1.9.1 1.9.0"; got != want {
		t.Errorf("with pre-releases: versions = %q, want %q", got, want)
	}
}

// TestListingUpstream reads an HTTP directory listing.
func TestListingUpstream(t *testing.T) {
	u := upstreamtest.Listing(t, []string{"1.8.0/", "1.9.0/", "1.9.1/", "2.0.0-rc.1/", "latest/", "SHA256SUMS"})
	s := mustLookup(t, NewLooker(), Upstream{Listing: &ListingUpstream{URL: u}})
	if got, want := versions(s), "1.9.1 1.9.0 1.8.0"; got != want {
		t.Errorf("versions = %q, want %q", got, want)
	}
	if s.NotVersions != 2 || s.Refused != 1 {
		t.Errorf("NotVersions, Refused = %d, %d, want 2 (latest, SHA256SUMS), 1 (the rc)", s.NotVersions, s.Refused)
	}
}

// TestGitUpstream lists the tags of a repository served by git daemon,
// annotated tags by their commit.
func TestGitUpstream(t *testing.T) {
	url, commits := upstreamtest.GitDaemon(t, []string{"v1.0.0", "v1.1.0", "release-candidate", "v1.2.0-rc.1", "v2.0.0"})
	l := NewLooker()
	s := mustLookup(t, l, Upstream{Git: &GitUpstream{URL: url}, Versions: VersionPolicy{Strip: []string{"v"}, Constraint: "<2"}})
	if got, want := versions(s), "1.1.0 1.0.0"; got != want {
		t.Errorf("versions = %q, want %q", got, want)
	}
	for _, c := range s.Allowed {
		if c.Commit != commits[c.Tag] {
			t.Errorf("tag %s: commit %s, want %s", c.Tag, c.Commit, commits[c.Tag])
		}
	}
	got, err := l.GitTag(context.Background(), url, "v2.0.0")
	if err != nil || got != commits["v2.0.0"] {
		t.Errorf("GitTag(v2.0.0) = %s, %v; want %s", got, err, commits["v2.0.0"])
	}
}

// TestOCIUpstream lists chart and image tags in the real registry and
// resolves images for a platform.
func TestOCIUpstream(t *testing.T) {
	reg := testenv.Registry(t)
	repo := fmt.Sprintf("watch/%d", time.Now().UnixNano())
	for _, tag := range []string{"1.8.0", "1.9.0", "1.9.1", "1.9.2-rc.1", "2.0.0", "latest", "sha256-abc.sig"} {
		upstreamtest.PushImage(t, reg, repo+"/app", tag, "linux/amd64")
	}
	armOnly := upstreamtest.PushImage(t, reg, repo+"/app", "1.9.3", "linux/arm64")
	multi := upstreamtest.PushImage(t, reg, repo+"/app", "1.9.4", "linux/arm64", "linux/amd64")
	for _, v := range []string{"0.9.0", "1.0.0", "1.0.1", "1.1.0-beta.1"} {
		upstreamtest.PushChart(t, reg, repo+"/charts", "demo", v)
	}
	l := NewLooker(WithPlainHTTP(plainhttp.Policy{Loopback: true}), withLimits(Limits{Pages: 20}))
	s := mustLookup(t, l, Upstream{OCI: &OCIUpstream{Repository: reg + "/" + repo + "/app"}, Versions: VersionPolicy{Constraint: "~1.9"}})
	if got, want := versions(s), "1.9.4 1.9.3 1.9.1 1.9.0"; got != want {
		t.Errorf("image versions = %q, want %q", got, want)
	}
	if s.NotVersions != 2 {
		t.Errorf("NotVersions = %d, want 2 (latest, the signature tag)", s.NotVersions)
	}
	s = mustLookup(t, l, Upstream{OCI: &OCIUpstream{Repository: "oci://" + reg + "/" + repo + "/charts/demo"}, Versions: VersionPolicy{Prerelease: "include"}})
	if got, want := versions(s), "1.1.0-beta.1 1.0.1 1.0.0 0.9.0"; got != want {
		t.Errorf("chart versions = %q, want %q", got, want)
	}

	ctx := context.Background()
	_, err := l.ResolveImage(ctx, reg+"/"+repo+"/app:1.9.3", "linux/amd64")
	if !errors.Is(err, ErrNoPlatform) || !strings.Contains(err.Error(), "linux/arm64") {
		t.Errorf("ResolveImage(arm64 only) = %v, want ErrNoPlatform naming linux/arm64", err)
	}
	im, err := l.ResolveImage(ctx, reg+"/"+repo+"/app:1.9.4", "linux/amd64")
	if err != nil || im.Digest != multi || im.Tag != "1.9.4" {
		t.Errorf("ResolveImage(index) = %v, %v; want the index %s", im, err, multi)
	}
	if im, err := l.ResolveImage(ctx, reg+"/"+repo+"/app:1.9.3", "linux/arm64"); err != nil || im.Digest != armOnly {
		t.Errorf("ResolveImage(arm64) = %v, %v; want %s", im, err, armOnly)
	}
}

// TestHostileUpstreams: answers that would not end, or lead elsewhere,
// are refused with a named error, and non-versions are skipped.
func TestHostileUpstreams(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/huge/", func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat(`<a href="1.0.0/">x</a>`+"\n", 1000))
		for i := 0; i < 200; i++ { // 4.6 MB, no Content-Length
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	var srvURL string
	mux.HandleFunc("/repos/o/endless/releases", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", fmt.Sprintf(`<%s/repos/o/endless/releases?page=%s1>; rel="next"`, srvURL, r.URL.Query().Get("page")))
		w.Write([]byte(`[{"tag_name":"v1.0.0","assets":[]}]`))
	})
	mux.HandleFunc("/repos/o/elsewhere/releases", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", `<http://203.0.113.9/repos/o/elsewhere/releases?page=2>; rel="next"`)
		w.Write([]byte(`[]`))
	})
	mux.HandleFunc("/moved/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://203.0.113.9/pub/", http.StatusFound)
	})
	mux.HandleFunc("/v2/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			return
		}
		w.Header().Set("Link", fmt.Sprintf(`</v2/app/tags/list?last=%d>; rel="next"`, time.Now().UnixNano()))
		fmt.Fprint(w, `{"name":"app","tags":["1.0.0","junk"]}`)
	})
	mux.HandleFunc("/junk/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<a href="latest/">latest</a><a href="nightly/">n</a><a href="main/">m</a>`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	srvURL = srv.URL
	host := strings.TrimPrefix(srv.URL, "http://")
	l := NewLooker(withLimits(Limits{Bytes: 1 << 20, Pages: 5}), WithPlainHTTP(plainhttp.Policy{Loopback: true}), WithTimeout(5*time.Second))
	for _, tc := range []struct {
		name string
		u    Upstream
		want error
		text string
	}{
		{"huge listing", Upstream{Listing: &ListingUpstream{URL: srv.URL + "/huge/"}}, ErrTooLarge, "more than the limit of 1048576 bytes"},
		{"endless release pages", Upstream{GitHub: &GitHubUpstream{Repository: "o/endless", API: srv.URL}}, ErrTooManyPages, "past 5 pages"},
		{"next page on another host", Upstream{GitHub: &GitHubUpstream{Repository: "o/elsewhere", API: srv.URL}}, ErrRedirect, "is on another host"},
		{"redirect off loopback", Upstream{Listing: &ListingUpstream{URL: srv.URL + "/moved/"}}, ErrRedirect, "redirects off loopback to http://203.0.113.9/pub/"},
		{"endless tag pages", Upstream{OCI: &OCIUpstream{Repository: host + "/app"}}, ErrTooManyPages, "past 5 pages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := l.Lookup(context.Background(), tc.u)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("Lookup = %v, want %v with %q", err, tc.want, tc.text)
			}
			if !strings.Contains(err.Error(), Describe(tc.u)) {
				t.Errorf("error %q does not name the upstream", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
	s := mustLookup(t, l, Upstream{Listing: &ListingUpstream{URL: srv.URL + "/junk/"}})
	if len(s.Allowed) != 0 || s.NotVersions != 3 {
		t.Errorf("junk listing: %+v, want nothing allowed, 3 not versions", s)
	}
	if _, err := NewLooker(WithOffline(true)).Lookup(context.Background(), Upstream{Listing: &ListingUpstream{URL: srv.URL}}); !errors.Is(err, ErrOffline) {
		t.Errorf("offline: %v, want ErrOffline", err)
	}
}

// TestCheck: the current version of each upstream (spec.version, an
// image's tag, a requirement's constraint), the newest allowed, and a
// recipe without a rule reported as unwatched.
func TestCheck(t *testing.T) {
	kv := upstreamtest.Listing(t, []string{"v1.9.0/", "v1.9.3/", "v1.10.0/"})
	cdi := upstreamtest.Listing(t, []string{"v1.66.0/", "v1.67.0/"})
	tpl := upstreamtest.Listing(t, []string{"v0.2.2/"})
	rec, _, err := recipe.Parse("recipe.yaml", []byte(`apiVersion: kubepkg.dev/v1
kind: Recipe
metadata: {name: virt}
spec:
  version: 1.9.0
  build: 1
  package:
    images: [quay.io/kubevirt/virt-template-api:v0.2.2]
    variants: [{name: default, requires: [{package: cdi, version: "~1.66"}]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	rule, err := Parse("watch.yaml", []byte(fmt.Sprintf(`apiVersion: kbuild.dev/v1alpha1
kind: Watch
upstream: {listing: {url: %q}, versions: {strip: [v], constraint: "~1.9"}}
also:
  cdi: {listing: {url: %q}, versions: {strip: [v]}}
  template: {listing: {url: %q}, versions: {strip: [v]}}
images: [{repository: "quay.io/kubevirt/virt-template-*", tag: "v{version}", from: template}]
requires: [{package: cdi, version: "~{major}.{minor}", from: cdi}]
`, kv, cdi, tpl)))
	if err != nil {
		t.Fatal(err)
	}
	reports := Check(context.Background(), NewLooker(), []Target{
		{Dir: "recipes/virt", Recipe: rec, Rule: rule},
		{Dir: "recipes/plain", Err: fmt.Errorf("recipes/plain/watch.yaml: %w", ErrNoRule)},
	}, 4)
	var got []string
	for _, s := range reports[0].Upstreams {
		got = append(got, fmt.Sprintf("%s %s->%s %v", s.Name, s.Current, s.Newest, s.Outdated))
	}
	if want := "version 1.9.0->1.9.3 true|cdi 1.66.0->1.67.0 true|template 0.2.2->0.2.2 false"; strings.Join(got, "|") != want {
		t.Errorf("statuses = %s, want %s", strings.Join(got, "|"), want)
	}
	if !reports[0].Outdated() || !reports[1].Unwatched || reports[1].Outdated() {
		t.Errorf("reports = %+v", reports)
	}
}

// withLimits lowers the bounds on the answers (see Limits).
func withLimits(lim Limits) Option { return func(l *Looker) { l.limits = lim } }
