// Package upstreamtest serves upstreams on loopback for the tests of
// kbuild outdated and bump, shaped as the real ones answer: a Helm
// repository (index.yaml and archives, one entry may lie about its
// digest), a GitHub-style releases API with assets and Link pagination, an
// HTTP directory listing, a git daemon with tags, and images and charts
// pushed to the test registry.
package upstreamtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"kbuild.dev/kbuild/internal/testenv"
)

// ChartArchive returns a chart archive (.tgz) of chart name at version
// with appVersion and one ConfigMap template, the same bytes every time.
func ChartArchive(name, version, appVersion string) []byte {
	return archive([][2]string{
		{name + "/Chart.yaml", fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\nappVersion: %q\n", name, version, appVersion)},
		{name + "/values.yaml", "image:\n  repository: example\n  tag: latest\n"},
		{name + "/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  version: " + strconv.Quote(version) + "\n"},
	})
}

// archive returns a .tgz of files (name, body), with fixed times.
func archive(files [][2]string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.ModTime = time.Unix(0, 0)
	tw := tar.NewWriter(zw)
	for _, f := range files {
		tw.WriteHeader(&tar.Header{Name: f[0], Mode: 0o644, Size: int64(len(f[1])), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg})
		tw.Write([]byte(f[1]))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// brokenChart is a chart archive whose template does not render.
func brokenChart(name, version, appVersion string) []byte {
	return archive([][2]string{
		{name + "/Chart.yaml", fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\nappVersion: %q\n", name, version, appVersion)},
		{name + "/templates/cm.yaml", "{{ .Values.missing.deeper }}\n"},
	})
}

// Digest returns "sha256:<hex>" of b.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// HelmChart is one version in a HelmRepo.
type HelmChart struct {
	Name, Version, AppVersion string
	// Lie makes the index list a digest the archive does not have.
	Lie bool
	// Broken makes the chart's template fail to render.
	Broken bool
}

// HelmRepo serves index.yaml and the archives of charts; it returns the
// repository URL.
func HelmRepo(t testing.TB, charts []HelmChart) string {
	t.Helper()
	files := map[string][]byte{}
	var idx strings.Builder
	idx.WriteString("apiVersion: v1\nentries:\n")
	byName := map[string][]HelmChart{}
	var names []string
	for _, c := range charts {
		if byName[c.Name] == nil {
			names = append(names, c.Name)
		}
		byName[c.Name] = append(byName[c.Name], c)
	}
	for _, n := range names {
		fmt.Fprintf(&idx, "  %s:\n", n)
		for _, c := range byName[n] {
			file := fmt.Sprintf("%s-%s.tgz", c.Name, c.Version)
			data := ChartArchive(c.Name, c.Version, c.AppVersion)
			if c.Broken {
				data = brokenChart(c.Name, c.Version, c.AppVersion)
			}
			files[file] = data
			d := strings.TrimPrefix(Digest(data), "sha256:")
			if c.Lie {
				d = strings.Repeat("0", 64)
			}
			fmt.Fprintf(&idx, "  - apiVersion: v2\n    name: %s\n    version: %s\n    appVersion: %q\n    digest: %s\n    urls: [%s]\n", c.Name, c.Version, c.AppVersion, d, file)
		}
	}
	files["index.yaml"] = []byte(idx.String())
	return serveFiles(t, files)
}

// serveFiles serves files by name at the root of a loopback server.
func serveFiles(t testing.TB, files map[string][]byte) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Release is one release of a GitHubAPI.
type Release struct {
	Tag        string
	Prerelease bool
	Draft      bool
	// Assets are the asset files by name.
	Assets map[string][]byte
	// LieAbout names an asset whose listed digest is wrong.
	LieAbout string
}

// GitHubAPI serves /repos/OWNER/NAME/releases as GitHub does: newest
// first, per_page a page (default 30), a Link header to the next page;
// assets at /download/TAG/NAME with their sha256 digest listed. It returns
// the API's base URL.
func GitHubAPI(t testing.TB, repo string, releases []Release) string {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tag, asset, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/download/"), "/"); ok && strings.HasPrefix(r.URL.Path, "/download/") {
			for _, rel := range releases {
				if b, has := rel.Assets[asset]; rel.Tag == tag && has {
					w.Write(b)
					return
				}
			}
			http.NotFound(w, r)
			return
		}
		if r.URL.Path != "/repos/"+repo+"/releases" {
			http.NotFound(w, r)
			return
		}
		per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
		if per <= 0 {
			per = 30
		}
		per = min(per, 2) // small pages, so that pagination is exercised
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		page = max(page, 1)
		lo, hi := (page-1)*per, min(page*per, len(releases))
		type asset struct {
			Name   string `json:"name"`
			URL    string `json:"browser_download_url"`
			Size   int    `json:"size"`
			Digest string `json:"digest"`
		}
		type release struct {
			TagName    string  `json:"tag_name"`
			Draft      bool    `json:"draft"`
			Prerelease bool    `json:"prerelease"`
			Assets     []asset `json:"assets"`
		}
		out := []release{}
		for _, rel := range releases[min(lo, len(releases)):hi] {
			x := release{TagName: rel.Tag, Draft: rel.Draft, Prerelease: rel.Prerelease, Assets: []asset{}}
			for _, n := range sortedKeys(rel.Assets) {
				d := Digest(rel.Assets[n])
				if n == rel.LieAbout {
					d = "sha256:" + strings.Repeat("0", 64)
				}
				x.Assets = append(x.Assets, asset{Name: n, URL: srv.URL + "/download/" + rel.Tag + "/" + n, Size: len(rel.Assets[n]), Digest: d})
			}
			out = append(out, x)
		}
		if hi < len(releases) {
			w.Header().Set("Link", fmt.Sprintf(`<%s/repos/%s/releases?per_page=%d&page=%d>; rel="next", <%s/repos/%s/releases?page=1>; rel="first"`, srv.URL, repo, per, page+1, srv.URL, repo))
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Listing serves an Apache-style directory listing of names at /pub/
// (directories end in /) and returns its URL.
func Listing(t testing.TB, names []string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("<html><body><h1>Index of /pub/</h1><pre><a href=\"../\">../</a>\n<a href=\"?C=N;O=D\">Name</a>\n")
	for _, n := range names {
		fmt.Fprintf(&b, "<a href=\"%s\">%s</a>   04-Dec-2026 10:00   -\n", n, n)
	}
	b.WriteString("</pre></body></html>\n")
	return serveFiles(t, map[string][]byte{"pub/": []byte(b.String())}) + "/pub/"
}

// GitDaemon makes a repository with one commit per tag (chart/Chart.yaml
// at that version, an annotated tag for every other one), serves it with
// git daemon on loopback, and returns its git:// URL and each tag's
// commit.
func GitDaemon(t testing.TB, tags []string) (string, map[string]string) {
	t.Helper()
	root := t.TempDir()
	work := filepath.Join(root, "work")
	os.MkdirAll(filepath.Join(work, "chart", "templates"), 0o755)
	testenv.Git(t, root, "init", "-q", work)
	commits := map[string]string{}
	for i, tag := range tags {
		v := strings.TrimPrefix(tag, "v")
		os.WriteFile(filepath.Join(work, "chart", "Chart.yaml"), []byte("apiVersion: v2\nname: stack\nversion: "+v+"\n"), 0o644)
		os.WriteFile(filepath.Join(work, "chart", "templates", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stack\ndata:\n  tag: "+strconv.Quote(tag)+"\n"), 0o644)
		testenv.Git(t, work, "add", "-A")
		testenv.Git(t, work, "commit", "-q", "-m", tag)
		if i%2 == 0 {
			testenv.Git(t, work, "tag", "-a", "-m", tag, tag)
		} else {
			testenv.Git(t, work, "tag", tag)
		}
		commits[tag] = strings.TrimSpace(testenv.Git(t, work, "rev-parse", "HEAD"))
	}
	testenv.Git(t, root, "clone", "-q", "--bare", work, filepath.Join(root, "repo.git"))
	port := testenv.GitDaemon(t, root)
	url := fmt.Sprintf("git://127.0.0.1:%d/repo.git", port)
	return url, commits
}

var pushMu sync.Mutex

// PushImage pushes a small random image for platform (OS/ARCH) to
// registry/repo:tag and returns its digest. With several platforms an
// index of one image each is pushed.
func PushImage(t testing.TB, registry, repo, tag string, platforms ...string) string {
	t.Helper()
	pushMu.Lock()
	defer pushMu.Unlock()
	ref, err := name.NewTag(registry+"/"+repo+":"+tag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	image := func(platform string) v1.Image {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		cf, _ := img.ConfigFile()
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture, _ = strings.Cut(platform, "/")
		img, err = mutate.ConfigFile(img, cf)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	if len(platforms) == 1 {
		img := image(platforms[0])
		if err := remote.Write(ref, img); err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		return d.String()
	}
	var idx v1.ImageIndex = empty.Index
	for _, p := range platforms {
		os, arch, _ := strings.Cut(p, "/")
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: image(p), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: os, Architecture: arch}}})
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatal(err)
	}
	d, _ := idx.Digest()
	return d.String()
}

func sortedKeys(m map[string][]byte) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

// PushChart pushes chart name at version as Helm pushes it (config and
// content media types) to registry/repo/name:version and returns the
// archive's digest.
func PushChart(t testing.TB, registry, repo, chartName, version string) string {
	t.Helper()
	pushMu.Lock()
	defer pushMu.Unlock()
	ref, err := name.NewTag(registry+"/"+repo+"/"+chartName+":"+version, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	data := ChartArchive(chartName, version, version)
	layer := static.NewLayer(data, "application/vnd.cncf.helm.chart.content.v1.tar+gzip")
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: layer})
	if err != nil {
		t.Fatal(err)
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, "application/vnd.cncf.helm.config.v1+json")
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	return Digest(data)
}
