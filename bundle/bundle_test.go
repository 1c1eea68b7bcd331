package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/chartpin"
	"kbuild.dev/kbuild/provenance"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// generated is the index's generated time in the fixtures.
var generated = time.Date(2026, 10, 10, 12, 0, 0, 0, time.UTC)

// fixture is a source registry with a chart and images under upstream
// repository paths, and a site whose signed index pins them.
type fixture struct {
	src      string // host:port
	site     string
	key      *trust.PrivateKey
	trust    *trust.Trust
	chart    string // archive digest
	images   []string
	multiRef string
}

func newRegistry(t *testing.T) string {
	host, _ := newCountingRegistry(t)
	return host
}

// uploads counts the blob uploads a registry was asked to start (mounts,
// with mount= and from=, and others) and the manifests put.
type uploads struct{ mounts, others, manifests atomic.Int64 }

var blobPath = regexp.MustCompile(`^/v2/(.+)/blobs/(sha256:[0-9a-f]{64})$`)

// newCountingRegistry is ggcr's in-process registry with blobs linked to
// repositories as a distribution registry does (ggcr's own shares every
// blob with every repository): a HEAD of a blob another repository holds
// is 404, and a cross-repository mount links it (201).
func newCountingRegistry(t *testing.T) (string, *uploads) {
	u := &uploads{}
	var mu sync.Mutex
	linked := map[string]bool{} // repo@digest
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if m := blobPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodHead && !linked[m[1]+"@"+m[2]] {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if repo, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/v2/"), "/blobs/uploads/"); ok && r.Method == http.MethodPost {
			if q := r.URL.Query(); q.Get("mount") != "" && q.Get("from") != "" {
				u.mounts.Add(1)
				if linked[q.Get("from")+"@"+q.Get("mount")] {
					linked[repo+"@"+q.Get("mount")] = true
					w.Header().Set("Location", "/v2/"+repo+"/blobs/"+q.Get("mount"))
					w.WriteHeader(http.StatusCreated)
					return
				}
			} else {
				u.others.Add(1)
			}
		}
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
			u.manifests.Add(1)
		}
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/blobs/uploads/") {
			repo := strings.TrimPrefix(r.URL.Path[:strings.Index(r.URL.Path, "/blobs/uploads/")], "/v2/")
			linked[repo+"@"+r.URL.Query().Get("digest")] = true
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), u
}

func push(t *testing.T, ref string, img v1.Image) string {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	return d.String()
}

// newFixture makes the source registry and a site signed by a new key,
// with index.yaml expiring at expires.
func newFixture(t *testing.T, seed int64, expires time.Time) *fixture {
	t.Helper()
	f := &fixture{src: newRegistry(t), site: t.TempDir()}
	rnd := rand.New(rand.NewSource(seed))
	var err error
	if f.key, err = trust.GenerateKey(rnd); err != nil {
		t.Fatal(err)
	}
	f.trust = &trust.Trust{IndexKeys: []*trust.PublicKey{f.key.Public()}}

	// A chart: a Helm config and one chart layer.
	archive := []byte("a chart archive of web 1.0.0-1")
	sum := sha256.Sum256(archive)
	f.chart = "sha256:" + hex.EncodeToString(sum[:])
	chart, _ := mutate.AppendLayers(empty.Image, static.NewLayer(archive, chartpin.ChartLayerMediaType))
	chart = mutate.ConfigMediaType(mutate.MediaType(chart, types.OCIManifestSchema1), "application/vnd.cncf.helm.config.v1+json")
	push(t, f.src+"/charts/web:1.0.0-1", chart)

	// Images under upstream names, and a two-platform index.
	// Both share a layer, which Import mounts rather than uploads twice.
	shared, _ := random.Layer(1024, types.OCILayer)
	for _, repo := range []string{"quay.io/kubevirt/virt-api:v1.9.0", "registry.k8s.io/coredns/coredns:v1.12.0"} {
		img, _ := random.Image(2048, 2)
		img, _ = mutate.AppendLayers(img, shared)
		d := push(t, f.src+"/"+repo, img)
		f.images = append(f.images, repo+"@"+d)
	}
	var adds []mutate.IndexAddendum
	for _, p := range []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}} {
		img, _ := random.Image(1024, 1)
		cf, _ := img.ConfigFile()
		cf.OS, cf.Architecture = p.OS, p.Architecture
		img, _ = mutate.ConfigFile(img, cf)
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	ix := mutate.AppendManifests(empty.Index, adds...)
	r, _ := name.ParseReference(f.src+"/registry.k8s.io/pause:3.10", name.Insecure)
	if err := remote.WriteIndex(r, ix); err != nil {
		t.Fatal(err)
	}
	d, _ := ix.Digest()
	f.multiRef = "registry.k8s.io/pause:3.10@" + d.String()

	recs := []*spec.PackageSource{
		record("web", "1.0.0", spec.PackageSpec{
			Variants: []spec.Variant{{Name: "default", Requires: []spec.Requirement{{Package: "base", Version: "^1"}},
				Components: []spec.Component{{Name: "web", Chart: &spec.ChartRef{Repository: "oci://" + f.src + "/charts", Name: "web", Version: "1.0.0-1", Digest: f.chart}}}}},
			Images: []string{f.images[0], f.multiRef},
		}),
		record("base", "1.0.0", spec.PackageSpec{Images: []string{f.images[1]}}),
		record("base", "2.0.0", spec.PackageSpec{}),
	}
	writeTestSite(t, f.site, f.key, recs, expires)
	writeProvenance(t, f.site, "web-1.0.0-1", f.chart, f.key)
	return f
}

func record(name, version string, sp spec.PackageSpec) *spec.PackageSource {
	sp.Version, sp.Build = version, 1
	return &spec.PackageSource{APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind, Metadata: spec.RecordMetadata{Name: name}, Spec: sp}
}

func writeTestSite(t *testing.T, dir string, key *trust.PrivateKey, recs []*spec.PackageSource, expires time.Time) {
	t.Helper()
	b := index.NewBuilder()
	for _, r := range recs {
		if err := b.Add(r.Metadata.Name, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	data, err := b.Marshal(generated, expires)
	if err != nil {
		t.Fatal(err)
	}
	sigs, _ := trust.Sign(data, key)
	sig, _ := index.MarshalSignatures(sigs)
	os.WriteFile(filepath.Join(dir, "index.yaml"), data, 0o644)
	os.WriteFile(filepath.Join(dir, "index.yaml.sig"), sig, 0o644)
	os.MkdirAll(filepath.Join(dir, "sbom"), 0o755)
	os.WriteFile(filepath.Join(dir, "sbom", "web-1.0.0-1.cdx.json"), []byte(`{"bomFormat":"CycloneDX"}`), 0o644)
}

// writeProvenance writes provenance/KEY.intoto.json for a chart archive,
// signed by key.
func writeProvenance(t *testing.T, site, key, archive string, signer trust.Signer) {
	t.Helper()
	st := provenance.New(&spec.BuildInfo{Charts: []spec.BuiltChart{{Name: "web", Ref: "oci://example/web:1.0.0-1", Digest: archive, Manifest: archive}}}, "test", "", generated)
	env, err := provenance.Sign(st, signer)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(site, "provenance"), 0o755)
	os.WriteFile(filepath.Join(site, "provenance", key+".intoto.json"), env, 0o644)
}

var now = generated.Add(time.Hour)

func (f *fixture) create(t *testing.T, out string, opts ...Option) *Contents {
	t.Helper()
	opts = append([]Option{WithPlainHTTP(true), withNow(now), WithImageSource("oci://" + f.src)}, opts...)
	c, err := Create(context.Background(), out, f.site, f.trust, []Want{{Name: "web"}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCreateAndImport(t *testing.T) {
	f := newFixture(t, 1, generated.Add(30*24*time.Hour))
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	c := f.create(t, a)
	// The same site over HTTP gives the same bundle.
	srv := httptest.NewServer(http.FileServer(http.Dir(f.site)))
	defer srv.Close()
	if _, err := Create(context.Background(), b, srv.URL+"/index.yaml", f.trust, []Want{{Name: "web"}}, WithPlainHTTP(true), withNow(now), WithImageSource("oci://"+f.src)); err != nil {
		t.Fatal(err)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ab, bb) {
		t.Errorf("two bundles of the same inputs differ (%d and %d bytes)", len(ab), len(bb))
	}
	if got := len(c.Packages); got != 2 || c.Packages[0].Name != "base" || c.Packages[0].Version != "1.0.0" || c.Packages[0].Reason != "required by web 1.0.0" {
		t.Errorf("packages = %+v, want base 1.0.0 (required by web) and web", c.Packages)
	}
	if len(c.Images) != 3 || len(c.Charts) != 1 || !c.Created.Equal(generated) {
		t.Errorf("contents = %+v", c)
	}
	if got := strings.Join(c.Files, " "); !strings.Contains(got, "sbom/web-1.0.0-1.cdx.json") || !strings.Contains(got, "provenance/web-1.0.0-1.intoto.json") {
		t.Errorf("files = %v, want the SBOM and provenance of web", c.Files)
	}

	checkLayout(t, a)

	in, err := Inspect(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range in.Images {
		if len(im.PinnedBy) != 1 {
			t.Errorf("inspect: image %s pinned by %v", im.Ref, im.PinnedBy)
		}
	}

	mirror, ups := newCountingRegistry(t)
	site := t.TempDir()
	nodes := filepath.Join(t.TempDir(), "nodes")
	res, err := Import(context.Background(), a, f.trust, "oci://"+mirror+"/airgap", site, WithPlainHTTP(true), withNow(now), WithNodeConfig(nodes))
	if err != nil {
		t.Fatal(err)
	}
	// The node settings last, for every registry the images come from.
	if len(res.NodeConfig) == 0 || res.NodeConfigDir != nodes || res.Resigned {
		t.Errorf("Import with WithNodeConfig wrote node settings %v into %q (Resigned %v); want some, into %s, not re-signed", res.NodeConfig, res.NodeConfigDir, res.Resigned, nodes)
	}
	for _, p := range res.NodeConfig {
		if data, err := os.ReadFile(p); err != nil || !bytes.Contains(data, []byte(mirror)) {
			t.Errorf("node setting %s: %v; want it to name the mirror %s", p, err, mirror)
		}
	}
	for _, im := range append(f.images, f.multiRef) {
		r, _ := ParseImageRef(im)
		ref, _ := name.ParseReference(mirror+"/"+MirrorPath("airgap", r.Registry, r.Repository)+"@"+r.Digest, name.Insecure)
		if _, err := remote.Get(ref); err != nil {
			t.Errorf("mirror lacks %s: %v", im, err)
		}
	}
	if got := strings.Join(res.Registries, ","); got != "quay.io,registry.k8s.io" {
		t.Errorf("registries = %s", got)
	}
	up, _ := os.ReadFile(filepath.Join(f.site, "index.yaml"))
	down, _ := os.ReadFile(filepath.Join(site, "index.yaml"))
	if !bytes.Equal(up, down) {
		t.Errorf("the imported site's index.yaml differs from the signed one")
	}
	var loc Locations
	lb, _ := os.ReadFile(filepath.Join(site, LocationsFile))
	if err := json.Unmarshal(lb, &loc); err != nil || len(loc.Charts) != 1 || !strings.HasPrefix(loc.Charts[0].Mirror, "oci://"+mirror+"/airgap/") {
		t.Errorf("%s = %s (%v)", LocationsFile, lb, err)
	}
	// The shared layer: uploaded to one repository, a mount asked for
	// the other (this in-process registry answers with an upload).
	if got := ups.mounts.Load(); got != 1 {
		t.Errorf("import asked for %d mounts, want 1 (the layer the two images share)", got)
	}
	// A second import finds every blob in place and uploads none.
	before := ups.others.Load() + ups.mounts.Load()
	if _, err := Import(context.Background(), a, f.trust, "oci://"+mirror+"/airgap", site, WithPlainHTTP(true), withNow(now)); err != nil {
		t.Errorf("second import: %v", err)
	}
	if n := ups.others.Load() + ups.mounts.Load() - before; n != 0 {
		t.Errorf("second import started %d uploads, want 0: blobs the mirror has are skipped", n)
	}

	// A bundle of an older index, into the same site: a rollback.
	data, _ := os.ReadFile(filepath.Join(f.site, "index.yaml"))
	older := bytes.Replace(data, []byte(`generated: "2026-10-10T12:00:00Z"`), []byte(`generated: "2026-10-10T11:00:00Z"`), 1)
	if bytes.Equal(older, data) {
		t.Fatalf("the index has no generated line to change:\n%s", data)
	}
	sigs, _ := trust.Sign(older, f.key)
	sig, _ := index.MarshalSignatures(sigs)
	os.WriteFile(filepath.Join(f.site, "index.yaml"), older, 0o644)
	os.WriteFile(filepath.Join(f.site, "index.yaml.sig"), sig, 0o644)
	old := filepath.Join(dir, "old.tar")
	f.create(t, old)
	before = ups.manifests.Load()
	_, err = Import(context.Background(), old, f.trust, "oci://"+mirror+"/airgap", site, WithPlainHTTP(true), withNow(now))
	if !errors.Is(err, trust.ErrRollback) {
		t.Errorf("import of an older index over the site = %v, want a rollback refusal", err)
	}
	if n := ups.manifests.Load() - before; n != 0 {
		t.Errorf("a refused import put %d manifests", n)
	}
}

func TestPlatformFilter(t *testing.T) {
	f := newFixture(t, 2, generated.Add(24*time.Hour))
	out := filepath.Join(t.TempDir(), "amd64.tar")
	c := f.create(t, out, WithPlatforms("linux/amd64"))
	for _, im := range c.Images {
		if strings.HasPrefix(im.Ref, "registry.k8s.io/pause") && strings.Join(im.Platforms, ",") != "linux/amd64" {
			t.Errorf("pause platforms = %v, want linux/amd64", im.Platforms)
		}
	}
	b, err := open(out, makeOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := verifyBundle(b, f.trust, nil, makeOptions([]Option{withNow(now)})); err != nil {
		t.Errorf("a platform-filtered bundle does not verify: %v", err)
	}
}

// entry is one tar entry of a bundle, for tests that damage bundles.
type entry struct {
	hdr  tar.Header
	data []byte
}

func readTar(t *testing.T, file string) []entry {
	t.Helper()
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var es []entry
	tr := tar.NewReader(fh)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return es
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		es = append(es, entry{*h, data})
	}
}

func writeTar(t *testing.T, file string, es []entry) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range es {
		h := e.hdr
		h.Size = int64(len(e.data))
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write(e.data)
	}
	tw.Close()
	os.WriteFile(file, buf.Bytes(), 0o644)
}

func blobName(dg string) string { return "blobs/sha256/" + strings.TrimPrefix(dg, "sha256:") }

// relist rewrites the bundle index with edit applied, and index.json to
// name it, so the bundle stays self-consistent.
func relist(t *testing.T, es []entry, edit func(*v1.IndexManifest) []entry) []entry {
	t.Helper()
	var ij v1.IndexManifest
	for _, e := range es {
		if e.hdr.Name == "index.json" {
			json.Unmarshal(e.data, &ij)
		}
	}
	var top v1.IndexManifest
	for _, e := range es {
		if e.hdr.Name == blobName(ij.Manifests[0].Digest.String()) {
			json.Unmarshal(e.data, &top)
		}
	}
	extra := edit(&top)
	tb, _ := json.Marshal(top)
	ij.Manifests[0].Digest, ij.Manifests[0].Size = mustHash(sha256Hex(tb)), int64(len(tb))
	ijb, _ := json.Marshal(ij)
	for i := range es {
		if es[i].hdr.Name == "index.json" {
			es[i].data = ijb
		}
	}
	es = append(es, entry{tar.Header{Name: blobName(sha256Hex(tb)), Mode: 0o644, Typeflag: tar.TypeReg}, tb})
	return append(es, extra...)
}

func TestImportRefuses(t *testing.T) {
	f := newFixture(t, 3, generated.Add(2*time.Hour))
	dir := t.TempDir()
	good := filepath.Join(dir, "good.tar")
	c := f.create(t, good)
	var layer string // a layer of the quay.io image
	{
		b, _ := open(good, makeOptions(nil))
		for _, d := range b.top.Manifests {
			if strings.HasPrefix(d.Annotations[AnnotationRef], "quay.io/") {
				raw, _ := io.ReadAll(b.blob(d.Digest.String()))
				var m v1.Manifest
				json.Unmarshal(raw, &m)
				layer = m.Layers[0].Digest.String()
			}
		}
		b.Close()
	}

	// A bundle of an index signed by another key.
	other := newFixture(t, 4, generated.Add(30*24*time.Hour))
	otherKey := filepath.Join(dir, "other.tar")
	other.create(t, otherKey)

	// A bundle whose provenance is signed by a key the index is not.
	stranger, _ := trust.GenerateKey(rand.New(rand.NewSource(9)))
	writeProvenance(t, f.site, "web-1.0.0-1", f.chart, stranger)
	badProv := filepath.Join(dir, "badprov.tar")
	f.create(t, badProv)

	// An extra image the signed index does not pin.
	extraImg, _ := random.Image(512, 1)
	extraDigest, _ := extraImg.Digest()
	extraRaw, _ := extraImg.RawManifest()
	extraCfg, _ := extraImg.RawConfigFile()
	extraCfgName, _ := extraImg.ConfigName()
	extraLayers, _ := extraImg.Layers()
	extraLayer, _ := extraLayers[0].Compressed()
	extraLayerData, _ := io.ReadAll(extraLayer)
	extraLayerDigest, _ := extraLayers[0].Digest()

	cases := []struct {
		name     string
		damage   func(es []entry) []entry
		now      time.Time
		file     string
		truncate bool // cut the file in the middle of the image layer
		want     []string
	}{
		{name: "a byte appended to the chart blob", damage: func(es []entry) []entry {
			for i := range es {
				if es[i].hdr.Name == blobName(f.chart) {
					es[i].data = append(es[i].data, '!')
				}
			}
			return es
		}, want: []string{"chart " + strings.TrimPrefix(c.Charts[0].Ref, ""), "the package pins " + f.chart, "digest " + sha256Hex(append([]byte("a chart archive of web 1.0.0-1"), '!'))}},
		{name: "an image blob altered", damage: func(es []entry) []entry {
			for i := range es {
				if es[i].hdr.Name == blobName(layer) {
					es[i].data[10] ^= 0xff
				}
			}
			return es
		}, want: []string{"image quay.io/kubevirt/virt-api", "blob " + layer + " holds content with digest sha256:"}},
		{name: "a blob missing", damage: func(es []entry) []entry {
			var out []entry
			for _, e := range es {
				if e.hdr.Name != blobName(layer) {
					out = append(out, e)
				}
			}
			return out
		}, want: []string{"blob " + layer + " is missing from the bundle"}},
		{name: "the index signed by another key", file: otherKey, want: []string{"index is not signed by a trusted key"}},
		{name: "provenance not signed by an index key", file: badProv, want: []string{"provenance/web-1.0.0-1.intoto.json (web 1.0.0 build 1, chart web " + f.chart + ")", "no valid signature by key"}},
		{name: "an expired index", now: generated.Add(3 * time.Hour), want: []string{"index expired at 2026-10-10T14:00:00Z"}},
		{name: "truncated mid-blob", truncate: true, want: []string{"truncated in " + blobName(layer), "copy it again"}},
		{name: "gzip-compressed", file: gzipFile(t, good), want: []string{"the file is gzip-compressed; a bundle is a plain tar: decompress it (gunzip)"}},
		{name: "an entry with ..", damage: func(es []entry) []entry {
			return append(es, entry{tar.Header{Name: "blobs/../../evil", Mode: 0o644, Typeflag: tar.TypeReg}, []byte("x")})
		}, want: []string{`entry "blobs/../../evil" leaves the bundle`}},
		{name: "an entry with a 300 KB name", damage: func(es []entry) []entry {
			return append(es, entry{tar.Header{Name: "blobs/" + strings.Repeat("n", 300<<10), Mode: 0o644, Typeflag: tar.TypeReg, Format: tar.FormatPAX}, []byte("x")})
		}, want: []string{`… (307206 bytes)`}},
		{name: "a symlink", damage: func(es []entry) []entry {
			return append(es, entry{tar.Header{Name: "blobs/sha256/link", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink}, nil})
		}, want: []string{`entry "blobs/sha256/link" is a link (to "/etc/passwd")`}},
		{name: "a manifest the index does not pin", damage: func(es []entry) []entry {
			return relist(t, es, func(top *v1.IndexManifest) []entry {
				top.Manifests = append(top.Manifests, v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: extraDigest, Size: int64(len(extraRaw)),
					Annotations: map[string]string{AnnotationKind: kindImage, AnnotationRef: "quay.io/evil/miner:latest@" + extraDigest.String()}})
				reg := func(n string, b []byte) entry {
					return entry{tar.Header{Name: n, Mode: 0o644, Typeflag: tar.TypeReg}, b}
				}
				return []entry{reg(blobName(extraDigest.String()), extraRaw), reg(blobName(extraCfgName.String()), extraCfg), reg(blobName(extraLayerDigest.String()), extraLayerData)}
			})
		}, want: []string{"the bundle lists image quay.io/evil/miner:latest@" + extraDigest.String(), "which the signed index does not pin"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = filepath.Join(t.TempDir(), "bad.tar")
				es := readTar(t, good)
				if tc.damage != nil {
					es = tc.damage(es)
				}
				writeTar(t, file, es)
			}
			if tc.truncate {
				raw, _ := os.ReadFile(good)
				var data []byte
				for _, e := range readTar(t, good) {
					if e.hdr.Name == blobName(layer) {
						data = e.data
					}
				}
				at := bytes.Index(raw, data) + len(data)/2
				os.WriteFile(file, raw[:at], 0o644)
			}
			when := now
			if !tc.now.IsZero() {
				when = tc.now
			}
			mirror := newRegistry(t)
			_, err := Import(context.Background(), file, f.trust, "oci://"+mirror+"/airgap", t.TempDir(), WithPlainHTTP(true), withNow(when))
			if err == nil {
				t.Fatal("Import accepted a bad bundle")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Import error = %v\nwant it to contain %q", err, w)
				}
			}
			if len(err.Error()) > 4096 {
				t.Errorf("Import error is %d bytes long", len(err.Error()))
			}
			if strings.Contains(err.Error(), "sha256 sha256:") {
				t.Errorf("Import error says the algorithm twice: %v", err)
			}
			var ve *trust.VerificationError
			if !errors.Is(err, ErrBadBundle) && !errors.As(err, &ve) {
				t.Errorf("Import error is neither ErrBadBundle nor a VerificationError: %v", err)
			}
			if tc.file == "" && tc.now.IsZero() && !strings.Contains(tc.name, "pin") {
				// Inspect, without keys, refuses damaged bundles too.
				if _, err := Inspect(context.Background(), file); !errors.Is(err, ErrBadBundle) {
					t.Errorf("Inspect of a damaged bundle: %v", err)
				}
			}
			reg, _ := name.NewRegistry(mirror, name.Insecure)
			if repos, err := remote.Catalog(context.Background(), reg); err != nil || len(repos) != 0 {
				t.Errorf("the mirror holds %v (%v) after a refused import; nothing may be pushed", repos, err)
			}
		})
	}
}

// TestRootOfTrust: a site under a root of trust (two root versions); the
// bundle carries root.yaml and root/N.yaml, and Import walks the chain from
// the pinned root key alone.
func TestRootOfTrust(t *testing.T) {
	f := newFixture(t, 5, generated.Add(24*time.Hour))
	rnd := rand.New(rand.NewSource(6))
	rootKey, _ := trust.GenerateKey(rnd)
	cfg := trust.RootConfig{Expires: generated.Add(365 * 24 * time.Hour), RootKeys: []*trust.PublicKey{rootKey.Public()}, RootThreshold: 1,
		IndexKeys: []*trust.PublicKey{f.key.Public()}, IndexThreshold: 1}
	r1, err := trust.NewRoot(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r1.Sign(rootKey)
	r2, _ := r1.Next(cfg)
	r2.Sign(rootKey)
	os.MkdirAll(filepath.Join(f.site, "root"), 0o755)
	for i, r := range []*trust.Root{r1, r2} {
		b, _ := r.Marshal()
		os.WriteFile(filepath.Join(f.site, "root", fmt.Sprintf("%d.yaml", i+1)), b, 0o644)
		if i == 1 {
			os.WriteFile(filepath.Join(f.site, "root.yaml"), b, 0o644)
		}
	}
	tr := &trust.Trust{RootKeys: []*trust.PublicKey{rootKey.Public()}}
	out := filepath.Join(t.TempDir(), "b.tar")
	c, err := Create(context.Background(), out, f.site, tr, []Want{{Name: "web"}}, WithPlainHTTP(true), withNow(now), WithImageSource("oci://"+f.src))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Files, " "); !strings.Contains(got, "root.yaml root/1.yaml root/2.yaml") {
		t.Errorf("files = %s, want the root chain", got)
	}
	mirror := newRegistry(t)
	res, err := Import(context.Background(), out, tr, "oci://"+mirror+"/m", t.TempDir(), WithPlainHTTP(true), withNow(now))
	if err != nil {
		t.Fatal(err)
	}
	if res.Verified.Root == nil || res.Verified.Root.Signed.Version != 2 {
		t.Errorf("import did not walk to root version 2: %+v", res.Verified.Root)
	}
	// Another root key: refused.
	other, _ := trust.GenerateKey(rnd)
	_, err = Import(context.Background(), out, &trust.Trust{RootKeys: []*trust.PublicKey{other.Public()}}, "oci://"+mirror+"/n", t.TempDir(), WithPlainHTTP(true), withNow(now))
	if !errors.Is(err, trust.ErrNotSigned) || !strings.Contains(err.Error(), "root version 1 is not signed by the pinned root keys") {
		t.Errorf("import with another root key: %v", err)
	}
}

// checkLayout unpacks the bundle with tar and reads it as crane does, with
// go-containerregistry's layout package: every image and image index is
// valid (digests, sizes, config diff IDs), and every chart's archive is
// the pinned blob. (The metadata image's layers have a media type of their
// own, which ggcr does not list as layers; Inspect reads it.)
func checkLayout(t *testing.T, file string) {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("tar", "-xf", file, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("tar -xf: %v\n%s", err, out)
	}
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	rm, _ := root.IndexManifest()
	top, err := root.ImageIndex(rm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	tm, _ := top.IndexManifest()
	kinds := map[string]int{}
	for _, d := range tm.Manifests {
		kind := d.Annotations[AnnotationKind]
		kinds[kind]++
		switch {
		case kind == kindImage && d.MediaType.IsIndex():
			ix, err := top.ImageIndex(d.Digest)
			if err == nil {
				err = validate.Index(ix)
			}
			if err != nil {
				t.Errorf("image index %s: %v", d.Annotations[AnnotationRef], err)
			}
		case kind == kindImage:
			img, err := top.Image(d.Digest)
			if err == nil {
				err = validate.Image(img)
			}
			if err != nil {
				t.Errorf("%s %s: %v", kind, d.Annotations[AnnotationRef], err)
			}
		case kind == kindChart:
			img, err := top.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			m, _ := img.Manifest()
			l, err := img.LayerByDigest(m.Layers[0].Digest)
			if err != nil {
				t.Fatal(err)
			}
			rc, _ := l.Compressed()
			data, _ := io.ReadAll(rc)
			if sha256Hex(data) != m.Layers[0].Digest.String() {
				t.Errorf("chart %s: archive blob does not match its digest", d.Annotations[AnnotationRef])
			}
		}
	}
	if kinds[kindMetadata] != 1 || kinds[kindChart] == 0 || kinds[kindImage] == 0 {
		t.Errorf("the bundle index lists %v", kinds)
	}
}

// TestMaxBlobSize: a blob over WithMaxBlobSize is refused, by Create
// before the bundle is written and by a reader of the bundle, with both
// sizes named.
func TestMaxBlobSize(t *testing.T) {
	f := newFixture(t, 1, generated.Add(30*24*time.Hour))
	dir := t.TempDir()
	good := filepath.Join(dir, "good.tar")
	f.create(t, good)
	if _, err := Inspect(context.Background(), good, withMaxBlobSize(64)); err == nil || !strings.Contains(err.Error(), "more than the 64 allowed") {
		t.Errorf("Inspect with a 64-byte cap: %v", err)
	}
	if _, err := Inspect(context.Background(), good); err != nil {
		t.Errorf("Inspect with the default cap: %v", err)
	}
	small := filepath.Join(dir, "small.tar")
	_, err := Create(context.Background(), small, f.site, f.trust, []Want{{Name: "web"}},
		WithPlainHTTP(true), withNow(now), WithImageSource("oci://"+f.src), withMaxBlobSize(64))
	if err == nil || !strings.Contains(err.Error(), "more than the 64 allowed") {
		t.Errorf("Create with a 64-byte cap: %v", err)
	}
	if _, err := os.Stat(small); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused Create left %s (%v)", small, err)
	}
}

// TestInspectImportOneRule: Inspect and Import apply one rule to a blob
// whose content is not what its name says: both refuse the bundle, and
// for a blob nothing refers to (inspect refused it and import used to
// push the rest as verified) with the same message.
func TestInspectImportOneRule(t *testing.T) {
	f := newFixture(t, 3, generated.Add(2*time.Hour))
	good := filepath.Join(t.TempDir(), "good.tar")
	f.create(t, good)
	liar := mustHash(sha256Hex([]byte("what the name says"))).String()
	for _, tc := range []struct {
		name   string
		damage func([]entry) []entry
		same   bool // the two messages are identical
	}{
		{"an extra blob nothing refers to, whose name lies", func(es []entry) []entry {
			return append(es, entry{tar.Header{Name: blobName(liar), Mode: 0o644, Typeflag: tar.TypeReg}, []byte("something else")})
		}, true},
		{"the chart blob altered", func(es []entry) []entry {
			for i := range es {
				if es[i].hdr.Name == blobName(f.chart) {
					es[i].data = append(es[i].data, '!')
				}
			}
			return es
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "bad.tar")
			writeTar(t, file, tc.damage(readTar(t, good)))
			_, ierr := Inspect(context.Background(), file)
			_, merr := Import(context.Background(), file, f.trust, "oci://"+newRegistry(t)+"/airgap", t.TempDir(), WithPlainHTTP(true), withNow(now))
			if ierr == nil || merr == nil {
				t.Fatalf("Inspect = %v, Import = %v; want both to refuse", ierr, merr)
			}
			if tc.same && ierr.Error() != merr.Error() {
				t.Errorf("Inspect and Import refuse differently:\n%v\n%v", ierr, merr)
			}
			for _, err := range []error{ierr, merr} {
				if !strings.Contains(err.Error(), "the bundle was changed after it was made") {
					t.Errorf("refusal does not say the bundle was changed: %v", err)
				}
			}
		})
	}
}

// gzipFile writes a gzip-compressed copy of file and returns its name.
func gzipFile(t *testing.T, file string) string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(raw)
	zw.Close()
	out := filepath.Join(t.TempDir(), "bundle.tar.gz")
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
