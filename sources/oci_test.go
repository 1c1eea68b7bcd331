package sources

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/spec"
)

// startRegistry runs ggcr's in-process registry on loopback; wrap, if not
// nil, may intercept requests. It returns host:port and a request counter.
func startRegistry(t testing.TB, wrap func(http.Handler) http.Handler) (string, *counter) {
	t.Helper()
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if wrap != nil {
		h = wrap(h)
	}
	srv, count := serve(t, h)
	return strings.TrimPrefix(srv.URL, "http://"), count
}

// pushChart pushes a chart archive as Helm does and returns the manifest
// digest.
func pushChart(t testing.TB, ref string, archive []byte) v1.Hash {
	t.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, "application/vnd.cncf.helm.config.v1+json")
	img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(archive, HelmChartLayerMediaType), MediaType: HelmChartLayerMediaType})
	if err != nil {
		t.Fatal(err)
	}
	return push(t, ref, img)
}

func push(t testing.TB, ref string, img v1.Image) v1.Hash {
	t.Helper()
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	return d
}

func TestFetchOCIChart(t *testing.T) {
	archive := chartArchive(t, "app", "1.2.3+build.4")
	other := chartArchive(t, "other", "1.0.0")
	var badLayer string
	host, count := startRegistry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if badLayer != "" && r.Method == http.MethodGet && r.URL.Path == "/v2/charts/bad/blobs/"+badLayer {
				w.Write(other) // a blob that does not match its digest
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	manifest := pushChart(t, host+"/charts/app:1.2.3_build.4", archive)
	pushChart(t, host+"/charts/bad:1.0.0", archive)
	badLayer = sha(archive)
	rnd, _ := random.Image(100, 1)
	push(t, host+"/charts/image:1.0.0", rnd)

	repo := "oci://" + host + "/charts"
	for _, tc := range []struct {
		name   string
		chart  recipe.ChartSource
		opts   []Option
		target error
		msg    []string
	}{
		{"ok", recipe.ChartSource{Repository: repo, Name: "app", Version: "1.2.3+build.4", Digest: sha(archive)}, []Option{WithPlainHTTP(true)}, nil, nil},
		{"pin is the manifest digest", recipe.ChartSource{Repository: repo, Name: "app", Version: "1.2.3+build.4", Digest: manifest.String()}, nil, nil,
			[]string{"the pin " + manifest.String() + " is the digest of the OCI manifest of " + host + "/charts/app:1.2.3_build.4, not of the chart archive", "digest: " + sha(archive)}},
		{"pin differs", recipe.ChartSource{Repository: repo, Name: "app", Version: "1.2.3+build.4", Digest: sha(other)}, nil, nil,
			[]string{"chart app 1.2.3+build.4 from " + repo, "expected " + sha(other), "got " + sha(archive), "bump spec.build"}},
		{"blob does not match its digest", recipe.ChartSource{Repository: repo, Name: "bad", Version: "1.0.0", Digest: sha(archive)}, nil, nil,
			[]string{"expected " + sha(archive), "got " + sha(other), "the registry served a blob whose content does not match its digest"}},
		{"not a chart", recipe.ChartSource{Repository: repo, Name: "image", Version: "1.0.0", Digest: sha(archive)}, nil, nil,
			[]string{"has no layer of media type " + HelmChartLayerMediaType}},
		{"missing tag", recipe.ChartSource{Repository: repo, Name: "app", Version: "9.9.9", Digest: sha(archive)}, nil, nil,
			[]string{"chart app 9.9.9", "MANIFEST_UNKNOWN"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFetcher(t, tc.opts...)
			res, err := f.Fetch(context.Background(), "r", t.TempDir(), "up", recipe.Source{Chart: &tc.chart}, PluginInfo{})
			if tc.msg != nil {
				wantErr(t, err, tc.target, tc.msg...)
				assertNotCached(t, f, tc.chart.Digest)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := spec.ResolvedSource{Name: "up", Kind: "chart", Origin: repo + "/app@1.2.3+build.4", Digest: sha(archive)}
			if res.Resolved != want {
				t.Errorf("Resolved = %+v, want %+v", res.Resolved, want)
			}
			if _, err := os.Stat(filepath.Join(res.Path, "Chart.yaml")); err != nil {
				t.Errorf("no Chart.yaml at the root of %s", res.Path)
			}
			count.reset()
			if _, err := f.Fetch(context.Background(), "r", t.TempDir(), "up", recipe.Source{Chart: &tc.chart}, PluginInfo{}); err != nil {
				t.Fatal(err)
			}
			if n := count.reset(); n != 0 {
				t.Errorf("second fetch made %d requests", n)
			}
		})
	}
	t.Run("mismatch error type", func(t *testing.T) {
		c := recipe.ChartSource{Repository: repo, Name: "app", Version: "1.2.3+build.4", Digest: sha(other)}
		_, err := newFetcher(t).Fetch(context.Background(), "r", t.TempDir(), "up", recipe.Source{Chart: &c}, PluginInfo{})
		var dm *DigestMismatchError
		if !errors.As(err, &dm) || dm.Expected != sha(other) || dm.Got != sha(archive) {
			t.Errorf("error = %v, want *DigestMismatchError", err)
		}
	})
}

func TestFetchImage(t *testing.T) {
	host, count := startRegistry(t, nil)
	img, _ := random.Image(1000, 2)
	d := push(t, host+"/library/app:v1", img)
	idx, _ := random.Index(1000, 1, 3)
	tag, _ := name.NewTag(host + "/multi:v1")
	if err := remote.WriteIndex(tag, idx); err != nil {
		t.Fatal(err)
	}
	idxDigest, _ := idx.Digest()

	for _, ref := range []string{host + "/library/app:v1@" + d.String(), host + "/multi:v1@" + idxDigest.String(), host + "/multi@" + idxDigest.String()} {
		t.Run(ref, func(t *testing.T) {
			f := newFetcher(t)
			for i := range 2 {
				res, err := f.Fetch(context.Background(), "r", t.TempDir(), "img", recipe.Source{Image: &recipe.ImageSource{Ref: ref}}, PluginInfo{})
				if err != nil {
					t.Fatal(err)
				}
				_, dig, _ := strings.Cut(ref, "@")
				want := spec.ResolvedSource{Name: "img", Kind: "image", Origin: ref, Digest: dig}
				if res.Resolved != want || res.Path != "" {
					t.Errorf("Result = %+v, want Resolved %+v and no path", res, want)
				}
				if n := count.reset(); i == 1 && n != 0 {
					t.Errorf("second fetch made %d requests", n)
				}
			}
			// Offline, from the cache alone.
			res, err := withCache(t, f.cache.dir, WithOffline(true)).Fetch(context.Background(), "r", t.TempDir(), "img", recipe.Source{Image: &recipe.ImageSource{Ref: ref}}, PluginInfo{})
			if err != nil || res.Resolved.Origin != ref {
				t.Errorf("offline Fetch = %+v, %v; want %s from the cache", res, err, ref)
			}
			if n := count.reset(); n != 0 {
				t.Errorf("offline fetch made %d requests", n)
			}
		})
	}
	for _, tc := range []struct{ ref, msg string }{
		{host + "/library/app:v1", "not pinned by digest"},
		{host + "/library/app@" + sha([]byte("nope")), "MANIFEST_UNKNOWN"},
	} {
		f := newFetcher(t)
		_, err := f.Fetch(context.Background(), "r", t.TempDir(), "img", recipe.Source{Image: &recipe.ImageSource{Ref: tc.ref}}, PluginInfo{})
		wantErr(t, err, nil, tc.ref, tc.msg)
	}
	_, err := newFetcher(t, WithOffline(true)).Fetch(context.Background(), "recipes/x", t.TempDir(), "img", recipe.Source{Image: &recipe.ImageSource{Ref: host + "/library/app:v1@" + d.String()}}, PluginInfo{})
	wantErr(t, err, ErrOffline, "image "+host+"/library/app:v1@")
	wantNotCached(t, err, NotCachedError{Recipe: "recipes/x"})
}

func TestMirror(t *testing.T) {
	src, srcCount := startRegistry(t, nil)
	dst, dstCount := startRegistry(t, nil)
	img, _ := random.Image(2000, 3)
	d := push(t, src+"/team/app:v1", img)
	idx, _ := random.Index(1000, 2, 2)
	tag, _ := name.NewTag(src + "/team/multi:v1")
	if err := remote.WriteIndex(tag, idx); err != nil {
		t.Fatal(err)
	}
	idxDigest, _ := idx.Digest()
	f := newFetcher(t)

	for _, tc := range []struct {
		ref  string
		dst  string
		want v1.Hash
	}{
		{src + "/team/app:v1@" + d.String(), dst, d},
		{src + "/team/multi:v1@" + idxDigest.String(), dst, idxDigest},
		{src + "/team/app:v1@" + d.String(), src + "/mirror", d}, // same registry: layers mounted
	} {
		repo, err := name.NewRepository(tc.dst + "/" + MirrorPath(tc.ref))
		if err != nil {
			t.Fatal(err)
		}
		srcCount.reset()
		got, err := f.Mirror(context.Background(), tc.ref, repo)
		if err != nil {
			t.Fatalf("Mirror(%s): %v", tc.ref, err)
		}
		if got.DigestStr() != tc.want.String() || got.Context() != repo {
			t.Errorf("Mirror(%s) = %s, want %s@%s", tc.ref, got, repo, tc.want)
		}
		if tc.dst == src+"/mirror" {
			// ggcr's registry shares blobs across repositories (and does
			// not implement mount): all exist, so none may be uploaded.
			srcCount.mu.Lock()
			for _, p := range srcCount.paths {
				if strings.HasPrefix(p, "POST ") || strings.HasPrefix(p, "PATCH ") || strings.Contains(p, "/blobs/uploads") {
					t.Errorf("mirror uploaded a blob the registry has: %s", p)
				}
			}
			srcCount.mu.Unlock()
		}
		desc, err := remote.Get(got)
		if err != nil || desc.Digest != tc.want {
			t.Fatalf("mirrored %s: %v (digest %v)", got, err, desc)
		}
		if desc.MediaType.IsIndex() {
			ii, _ := desc.ImageIndex()
			m, _ := ii.IndexManifest()
			for _, child := range m.Manifests {
				if _, err := remote.Image(repo.Digest(child.Digest.String())); err != nil {
					t.Errorf("index child %s not mirrored: %v", child.Digest, err)
				}
			}
		}
	}
	// Mirroring again only checks that the digest is there.
	dstCount.reset()
	repo, _ := name.NewRepository(dst + "/" + MirrorPath(src+"/team/app:v1"))
	if _, err := f.Mirror(context.Background(), src+"/team/app:v1@"+d.String(), repo); err != nil {
		t.Fatal(err)
	}
	dstCount.mu.Lock()
	paths := dstCount.paths
	dstCount.mu.Unlock()
	for _, p := range paths {
		if !strings.HasPrefix(p, "HEAD ") && p != "GET /v2/" {
			t.Errorf("second mirror sent %s", p)
		}
	}
	if _, err := f.Mirror(context.Background(), src+"/team/app:v1", repo); err == nil || !strings.Contains(err.Error(), "not pinned by digest") {
		t.Errorf("Mirror of a tag: %v", err)
	}
}

func TestMirrorPath(t *testing.T) {
	for _, tc := range []struct{ ref, want string }{
		{"quay.io/kubevirt/virt-api:v1.9.0@sha256:" + strings.Repeat("a", 64), "quay.io/kubevirt/virt-api"},
		{"quay.io/kubevirt/virt-api", "quay.io/kubevirt/virt-api"},
		{"nginx", "docker.io/library/nginx"},
		{"docker.io/bitnami/redis:7", "docker.io/bitnami/redis"},
		{"index.docker.io/library/busybox@sha256:" + strings.Repeat("b", 64), "docker.io/library/busybox"},
		{"registry.k8s.io/ingress-nginx/controller:v1.10.0", "registry.k8s.io/ingress-nginx/controller"},
		{"localhost:5000/team/app:1", "localhost-5000/team/app"},
		{"Not A Ref", ""},
	} {
		if got := MirrorPath(tc.ref); got != tc.want {
			t.Errorf("MirrorPath(%q) = %q, want %q", tc.ref, got, tc.want)
		}
		if tc.want != "" {
			if _, err := name.NewRepository("mirror.example.com/" + tc.want); err != nil {
				t.Errorf("MirrorPath(%q) = %q is not a valid repository path: %v", tc.ref, tc.want, err)
			}
		}
	}
}

// TestRegistryStalls: a registry that sends the headers of a manifest or
// blob and then stalls is cut off after the idle timeout, for oci:// chart
// sources (manifest and layer) and image sources alike.
func TestRegistryStalls(t *testing.T) {
	archive := chartArchive(t, "app", "1.0.0")
	release := make(chan struct{})
	defer close(release)
	var stallPath string
	host, _ := startRegistry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && stallPath != "" && strings.Contains(r.URL.Path, stallPath) {
				w.Header().Set("Content-Type", string(types.OCIManifestSchema1))
				w.Header().Set("Content-Length", "100000")
				w.Write([]byte("{"))
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
				}
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	pushChart(t, host+"/charts/app:1.0.0", archive)
	img, _ := random.Image(100, 1)
	imgDigest := push(t, host+"/images/app:1", img)
	pin := sha(archive)
	for _, tc := range []struct {
		name, stall string
		src         recipe.Source
	}{
		{"chart manifest", "/manifests/", recipe.Source{Chart: &recipe.ChartSource{Repository: "oci://" + host + "/charts", Name: "app", Version: "1.0.0", Digest: pin}}},
		{"chart layer", "/blobs/" + pin, recipe.Source{Chart: &recipe.ChartSource{Repository: "oci://" + host + "/charts", Name: "app", Version: "1.0.0", Digest: pin}}},
		{"image manifest", "/manifests/", recipe.Source{Image: &recipe.ImageSource{Ref: host + "/images/app:1@" + imgDigest.String()}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stallPath = tc.stall
			f := newFetcher(t, WithTimeout(300*time.Millisecond), WithPlainHTTP(true), withRetries(0))
			_, err := f.Fetch(context.Background(), t.TempDir(), t.TempDir(), "src", tc.src, PluginInfo{})
			if !errors.Is(err, netdeadline.ErrStalled) || !strings.Contains(err.Error(), "no data for 300ms") {
				t.Fatalf("Fetch with a registry stalling on %s = %v, want an error wrapping netdeadline.ErrStalled", tc.stall, err)
			}
		})
	}
}
