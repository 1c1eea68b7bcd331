package ociserve

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"kbuild.dev/kbuild/internal/testenv"
)

const (
	helmConfigType = "application/vnd.cncf.helm.config.v1+json"
	helmLayerType  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// fixture is a layout holding one Helm chart artifact, tagged
// kbuild/demo:1.0.0-1, and a two-level image index tagged
// kbuild/multi:v1, plus entries the server must not serve by tag.
type fixture struct {
	dir       string
	chart     []byte // the chart archive
	manifest  string // digest of the chart's manifest
	config    string // digest of the chart's config blob
	layer     string // digest of the chart archive
	indexDig  string // digest of kbuild/multi:v1
	childDig  string // digest of the manifest inside it
	orphanDig string // a blob in the layout that no tag reaches
	referrer  string // digest of an untagged attestation whose subject is the chart
	refLayer  string // digest of its layer
}

const attestationType = "application/vnd.in-toto+json"

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// chartArchive builds a small, valid Helm chart .tgz by hand.
func chartArchive(t *testing.T, name, version string) []byte {
	t.Helper()
	files := []struct{ name, body string }{
		{"Chart.yaml", "apiVersion: v2\nname: " + name + "\nversion: " + version + "\ntype: application\ndescription: a test chart\n"},
		{"values.yaml", "greeting: hello\n"},
		{"templates/configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  greeting: {{ .Values.greeting | quote }}\n"},
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		hdr := &tar.Header{Name: name + "/" + f.name, Mode: 0o644, Size: int64(len(f.body)), ModTime: time.Unix(1700000000, 0), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeBlob(t *testing.T, p layout.Path, b []byte) v1.Hash {
	t.Helper()
	h, err := v1.NewHash(digestOf(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WriteBlob(h, io.NopCloser(bytes.NewReader(b))); err != nil {
		t.Fatal(err)
	}
	return h
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{dir: dir, chart: chartArchive(t, "demo", "1.0.0-1")}

	config := mustJSON(t, map[string]string{"apiVersion": "v2", "name": "demo", "version": "1.0.0-1"})
	ch := writeBlob(t, p, config)
	lh := writeBlob(t, p, f.chart)
	m := mustJSON(t, v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        v1.Descriptor{MediaType: helmConfigType, Size: int64(len(config)), Digest: ch},
		Layers:        []v1.Descriptor{{MediaType: helmLayerType, Size: int64(len(f.chart)), Digest: lh}},
	})
	mh := writeBlob(t, p, m)
	f.manifest, f.config, f.layer = mh.String(), ch.String(), lh.String()
	chartDesc := v1.Descriptor{MediaType: types.OCIManifestSchema1, Size: int64(len(m)), Digest: mh}

	// An image index whose child manifest is reachable only through it.
	childConfig := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`)
	cch := writeBlob(t, p, childConfig)
	child := mustJSON(t, v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        v1.Descriptor{MediaType: types.OCIConfigJSON, Size: int64(len(childConfig)), Digest: cch},
		Layers:        []v1.Descriptor{},
	})
	childH := writeBlob(t, p, child)
	idx := mustJSON(t, v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: types.OCIManifestSchema1, Size: int64(len(child)), Digest: childH,
			Platform: &v1.Platform{OS: "linux", Architecture: "amd64"},
		}},
	})
	idxH := writeBlob(t, p, idx)
	f.indexDig, f.childDig = idxH.String(), childH.String()
	f.orphanDig = writeBlob(t, p, []byte("not reachable from any tag")).String()

	// An attestation of the chart, stored without a ref name, as the
	// builder's layout target stores provenance.
	emptyConfig := []byte("{}")
	ech := writeBlob(t, p, emptyConfig)
	statement := []byte(`{"_type":"https://in-toto.io/Statement/v1"}`)
	sh := writeBlob(t, p, statement)
	att := mustJSON(t, v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  attestationType,
		Config:        v1.Descriptor{MediaType: types.OCIEmptyJSON, Size: int64(len(emptyConfig)), Digest: ech},
		Layers:        []v1.Descriptor{{MediaType: "application/vnd.in-toto+json", Size: int64(len(statement)), Digest: sh}},
		Subject:       &chartDesc,
		Annotations:   map[string]string{"org.opencontainers.image.created": "2023-11-14T22:13:20Z"},
	})
	ah := writeBlob(t, p, att)
	f.referrer, f.refLayer = ah.String(), sh.String()

	for _, d := range []v1.Descriptor{
		withRef(chartDesc, "kbuild/demo:0.9.0-1"), // replaced below: the last entry wins
		withRef(chartDesc, "kbuild/demo:1.0.0-1"),
		withRef(chartDesc, "kbuild/demo:latest"),
		withRef(v1.Descriptor{MediaType: types.OCIImageIndex, Size: int64(len(idx)), Digest: idxH}, "kbuild/multi:v1"),
		withRef(chartDesc, "baretag"),                    // skopeo style: no repository
		withRef(chartDesc, "localhost:5000/kbuild/demo"), // no tag: "5000/kbuild/demo" is not one
		withRef(chartDesc, "Upper/Case:v1"),              // not a valid repository name
		{MediaType: types.OCIManifestSchema1, Size: int64(len(att)), Digest: ah},
	} {
		if err := p.AppendDescriptor(d); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) referrerSize(t *testing.T) int {
	h, _ := v1.NewHash(f.referrer)
	b, err := layout.Path(f.dir).Bytes(h)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

func withRef(d v1.Descriptor, ref string) v1.Descriptor {
	d.Annotations = map[string]string{refNameAnnotation: ref}
	return d
}

func newServer(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	r, err := New(dir)
	if err != nil {
		t.Fatalf("New(%s): %v", dir, err)
	}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv
}

func TestNewRefusesNonLayout(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(dir string)
	}{
		{"missing directory", func(dir string) { os.RemoveAll(dir) }},
		{"no index.json", func(string) {}},
		{"malformed index.json", func(dir string) { os.WriteFile(filepath.Join(dir, "index.json"), []byte("{"), 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(dir)
			if _, err := New(dir); err == nil || !strings.Contains(err.Error(), dir) {
				t.Errorf("New(%s) = %v, want an error naming the directory", dir, err)
			}
		})
	}
}

func TestAPI(t *testing.T) {
	f := newFixture(t)
	srv := newServer(t, f.dir)
	repoBase := srv.URL + "/v2/kbuild/demo"
	zero := "sha256:" + strings.Repeat("0", 64)

	for _, tc := range []struct {
		name, method, url string
		want              int
		wantType          string // Content-Type
		wantDigest        string // Docker-Content-Digest
		wantBody          []byte // exact body; nil: not checked
		wantCode          string // OCI error code
	}{
		{name: "base", method: "GET", url: srv.URL + "/v2/", want: 200, wantType: "application/json", wantBody: []byte("{}")},
		{name: "base without slash", method: "GET", url: srv.URL + "/v2", want: 200},
		{name: "manifest by tag", method: "GET", url: repoBase + "/manifests/1.0.0-1", want: 200, wantType: string(types.OCIManifestSchema1), wantDigest: f.manifest},
		{name: "manifest by digest", method: "GET", url: repoBase + "/manifests/" + f.manifest, want: 200, wantType: string(types.OCIManifestSchema1), wantDigest: f.manifest},
		{name: "manifest HEAD", method: "HEAD", url: repoBase + "/manifests/latest", want: 200, wantType: string(types.OCIManifestSchema1), wantDigest: f.manifest},
		{name: "index by tag", method: "GET", url: srv.URL + "/v2/kbuild/multi/manifests/v1", want: 200, wantType: string(types.OCIImageIndex), wantDigest: f.indexDig},
		{name: "child manifest by digest", method: "GET", url: srv.URL + "/v2/kbuild/multi/manifests/" + f.childDig, want: 200, wantType: string(types.OCIManifestSchema1), wantDigest: f.childDig},
		{name: "chart archive blob", method: "GET", url: repoBase + "/blobs/" + f.layer, want: 200, wantType: "application/octet-stream", wantDigest: f.layer, wantBody: f.chart},
		{name: "config blob HEAD", method: "HEAD", url: repoBase + "/blobs/" + f.config, want: 200, wantDigest: f.config},
		{name: "tags", method: "GET", url: repoBase + "/tags/list", want: 200, wantBody: []byte(`{"name":"kbuild/demo","tags":["0.9.0-1","1.0.0-1","latest"]}`)},
		{name: "tags paginated", method: "GET", url: repoBase + "/tags/list?n=1&last=0.9.0-1", want: 200, wantBody: []byte(`{"name":"kbuild/demo","tags":["1.0.0-1"]}`)},
		{name: "catalog", method: "GET", url: srv.URL + "/v2/_catalog", want: 200, wantBody: []byte(`{"repositories":["kbuild/demo","kbuild/multi"]}`)},

		{name: "unknown tag", method: "GET", url: repoBase + "/manifests/2.0.0", want: 404, wantCode: codeManifestUnknown},
		{name: "unknown manifest digest", method: "GET", url: repoBase + "/manifests/" + zero, want: 404, wantCode: codeManifestUnknown},
		{name: "manifest of another repository", method: "GET", url: repoBase + "/manifests/" + f.childDig, want: 404, wantCode: codeManifestUnknown},
		{name: "unknown repository", method: "GET", url: srv.URL + "/v2/kbuild/nope/manifests/v1", want: 404, wantCode: codeNameUnknown},
		{name: "bare tag is not a repository", method: "GET", url: srv.URL + "/v2/baretag/tags/list", want: 404, wantCode: codeNameUnknown},
		{name: "unknown blob", method: "GET", url: repoBase + "/blobs/" + zero, want: 404, wantCode: codeBlobUnknown},
		{name: "blob no tag reaches", method: "GET", url: repoBase + "/blobs/" + f.orphanDig, want: 404, wantCode: codeBlobUnknown},
		{name: "blob of another repository", method: "GET", url: srv.URL + "/v2/kbuild/multi/blobs/" + f.layer, want: 404, wantCode: codeBlobUnknown},
		{name: "malformed digest", method: "GET", url: repoBase + "/blobs/sha256:abc", want: 400, wantCode: codeDigestInvalid},
		{name: "traversal digest", method: "GET", url: repoBase + "/blobs/sha256:..%2F..%2Findex.json", want: 404, wantCode: codeNotFound},
		{name: "invalid name", method: "GET", url: srv.URL + "/v2/Kbuild/demo/tags/list", want: 400, wantCode: codeNameInvalid},
		{name: "referrers", method: "GET", url: repoBase + "/referrers/" + f.manifest, want: 200, wantType: string(types.OCIImageIndex),
			wantBody: []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","size":` + strconv.Itoa(f.referrerSize(t)) + `,"digest":"` + f.referrer + `","annotations":{"org.opencontainers.image.created":"2023-11-14T22:13:20Z"},"artifactType":"application/vnd.in-toto+json"}]}`)},
		{name: "referrers filtered", method: "GET", url: repoBase + "/referrers/" + f.manifest + "?artifactType=application/example", want: 200,
			wantBody: []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`)},
		{name: "referrers of a subject without any", method: "GET", url: repoBase + "/referrers/" + zero, want: 200,
			wantBody: []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`)},
		{name: "referrers are per repository", method: "GET", url: srv.URL + "/v2/kbuild/multi/referrers/" + f.manifest, want: 200,
			wantBody: []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`)},
		{name: "referrers bad digest", method: "GET", url: repoBase + "/referrers/latest", want: 400, wantCode: codeDigestInvalid},
		{name: "referrer manifest", method: "GET", url: repoBase + "/manifests/" + f.referrer, want: 200, wantType: string(types.OCIManifestSchema1), wantDigest: f.referrer},
		{name: "referrer layer", method: "GET", url: repoBase + "/blobs/" + f.refLayer, want: 200, wantDigest: f.refLayer},
		{name: "referrer is not in other repositories", method: "GET", url: srv.URL + "/v2/kbuild/multi/manifests/" + f.referrer, want: 404, wantCode: codeManifestUnknown},
		{name: "unknown route", method: "GET", url: repoBase + "/uploads/x", want: 404, wantCode: codeNotFound},
		{name: "outside /v2", method: "GET", url: srv.URL + "/index.html", want: 404, wantCode: codeNotFound},
		{name: "bad page size", method: "GET", url: repoBase + "/tags/list?n=x", want: 400, wantCode: codePaginationBad},

		{name: "push manifest", method: "PUT", url: repoBase + "/manifests/2.0.0", want: 405, wantCode: codeUnsupported},
		{name: "start upload", method: "POST", url: repoBase + "/blobs/uploads/", want: 405, wantCode: codeUnsupported},
		{name: "patch upload", method: "PATCH", url: repoBase + "/blobs/uploads/x", want: 405, wantCode: codeUnsupported},
		{name: "delete manifest", method: "DELETE", url: repoBase + "/manifests/" + f.manifest, want: 405, wantCode: codeUnsupported},
		{name: "delete unknown", method: "DELETE", url: srv.URL + "/v2/x/blobs/" + zero, want: 405, wantCode: codeUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, tc.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.want {
				t.Fatalf("%s %s = %d %s, want %d", tc.method, tc.url, resp.StatusCode, body, tc.want)
			}
			if got := resp.Header.Get("Docker-Distribution-API-Version"); got != "registry/2.0" {
				t.Errorf("Docker-Distribution-API-Version = %q, want registry/2.0", got)
			}
			if tc.wantType != "" && resp.Header.Get("Content-Type") != tc.wantType {
				t.Errorf("Content-Type = %q, want %q", resp.Header.Get("Content-Type"), tc.wantType)
			}
			if tc.wantDigest != "" && resp.Header.Get("Docker-Content-Digest") != tc.wantDigest {
				t.Errorf("Docker-Content-Digest = %q, want %q", resp.Header.Get("Docker-Content-Digest"), tc.wantDigest)
			}
			if tc.want == 200 && tc.wantDigest != "" {
				// GET and HEAD both announce the full length; GET bodies hash to the digest.
				n, err := strconv.Atoi(resp.Header.Get("Content-Length"))
				if err != nil {
					t.Fatalf("Content-Length = %q: %v", resp.Header.Get("Content-Length"), err)
				}
				if tc.method == "GET" {
					if n != len(body) {
						t.Errorf("Content-Length = %d, body has %d bytes", n, len(body))
					}
					if got := digestOf(body); got != tc.wantDigest {
						t.Errorf("body digest = %s, want %s", got, tc.wantDigest)
					}
				} else if n == 0 || len(body) != 0 {
					t.Errorf("HEAD: Content-Length = %d, body %d bytes; want the blob's length and no body", n, len(body))
				}
			}
			if tc.wantBody != nil && !bytes.Equal(body, tc.wantBody) {
				t.Errorf("body = %s, want %s", body, tc.wantBody)
			}
			if tc.wantCode != "" {
				var e struct {
					Errors []apiError `json:"errors"`
				}
				if err := json.Unmarshal(body, &e); err != nil || len(e.Errors) != 1 {
					t.Fatalf("error body = %s (%v), want {\"errors\":[{…}]}", body, err)
				}
				if e.Errors[0].Code != tc.wantCode || e.Errors[0].Message == "" {
					t.Errorf("error = %+v, want code %s and a message", e.Errors[0], tc.wantCode)
				}
				if tc.want == 405 && resp.Header.Get("Allow") != "GET, HEAD" {
					t.Errorf("Allow = %q, want \"GET, HEAD\"", resp.Header.Get("Allow"))
				}
			}
		})
	}
}

func TestTagsPagination(t *testing.T) {
	f := newFixture(t)
	srv := newServer(t, f.dir)
	resp, err := http.Get(srv.URL + "/v2/kbuild/demo/tags/list?n=2")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `{"name":"kbuild/demo","tags":["0.9.0-1","1.0.0-1"]}`; string(body) != want {
		t.Errorf("tags?n=2 = %s, want %s", body, want)
	}
	if got, want := resp.Header.Get("Link"), `</v2/kbuild/demo/tags/list?last=1.0.0-1&n=2>; rel="next"`; got != want {
		t.Errorf("Link = %q, want %q", got, want)
	}
}

func TestRange(t *testing.T) {
	f := newFixture(t)
	srv := newServer(t, f.dir)
	req, _ := http.NewRequest("GET", srv.URL+"/v2/kbuild/demo/blobs/"+f.layer, nil)
	req.Header.Set("Range", "bytes=0-9")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, f.chart[:10]) {
		t.Errorf("Range bytes=0-9 = %d %x, want 206 %x", resp.StatusCode, body, f.chart[:10])
	}
}

// TestLayoutChanges checks that a running server sees a new tag and refuses
// a manifest whose bytes no longer match their digest.
func TestLayoutChanges(t *testing.T) {
	f := newFixture(t)
	srv := newServer(t, f.dir)
	p := layout.Path(f.dir)
	h, _ := v1.NewHash(f.manifest)
	m, err := p.Bytes(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendDescriptor(withRef(v1.Descriptor{MediaType: types.OCIManifestSchema1, Size: int64(len(m)), Digest: h}, "kbuild/demo:1.0.0-2")); err != nil {
		t.Fatal(err)
	}
	if code := status(t, srv.URL+"/v2/kbuild/demo/manifests/1.0.0-2"); code != 200 {
		t.Errorf("new tag after index.json changed = %d, want 200", code)
	}
	blob := filepath.Join(f.dir, "blobs", "sha256", h.Hex)
	os.Chmod(blob, 0o644)
	if err := os.WriteFile(blob, append(m, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := status(t, srv.URL+"/v2/kbuild/demo/manifests/1.0.0-1"); code != 500 {
		t.Errorf("corrupt manifest = %d, want 500", code)
	}
}

func status(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestRemotePull reads the chart through go-containerregistry's registry
// client, which checks every digest and size it is given.
func TestRemotePull(t *testing.T) {
	f := newFixture(t)
	srv := newServer(t, f.dir)
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, ref := range []string{host + "/kbuild/demo:1.0.0-1", host + "/kbuild/demo@" + f.manifest} {
		t.Run(ref, func(t *testing.T) {
			r, err := name.ParseReference(ref, name.Insecure)
			if err != nil {
				t.Fatal(err)
			}
			img, err := remote.Image(r)
			if err != nil {
				t.Fatalf("remote.Image(%s): %v", ref, err)
			}
			if d, err := img.Digest(); err != nil || d.String() != f.manifest {
				t.Errorf("digest = %v, %v; want %s", d, err, f.manifest)
			}
			layers, err := img.Layers()
			if err != nil || len(layers) != 1 {
				t.Fatalf("layers = %d, %v; want 1", len(layers), err)
			}
			rc, err := layers[0].Compressed()
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || !bytes.Equal(got, f.chart) {
				t.Errorf("layer = %d bytes, %v; want the chart archive (%d bytes)", len(got), err, len(f.chart))
			}
		})
	}
	tags, err := remote.List(mustRepo(t, host+"/kbuild/demo"))
	if err != nil || strings.Join(tags, ",") != "0.9.0-1,1.0.0-1,latest" {
		t.Errorf("remote.List = %v, %v", tags, err)
	}
	refs, err := remote.Referrers(mustRef(t, host+"/kbuild/demo@"+f.manifest).(name.Digest))
	if err != nil {
		t.Fatalf("remote.Referrers: %v", err)
	}
	if m, err := refs.IndexManifest(); err != nil || len(m.Manifests) != 1 || m.Manifests[0].Digest.String() != f.referrer || m.Manifests[0].ArtifactType != attestationType {
		t.Errorf("remote.Referrers = %+v, %v; want the attestation %s", m, err, f.referrer)
	}
	idx, err := remote.Index(mustRef(t, host+"/kbuild/multi:v1"))
	if err != nil {
		t.Fatalf("remote.Index: %v", err)
	}
	child, err := idx.Image(mustHash(t, f.childDig))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := child.ConfigFile(); err != nil {
		t.Errorf("child config: %v", err)
	}
}

func mustRepo(t *testing.T, s string) name.Repository {
	r, err := name.NewRepository(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustRef(t *testing.T, s string) name.Reference {
	r, err := name.ParseReference(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustHash(t *testing.T, s string) v1.Hash {
	h, err := v1.NewHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestHelmPull pulls the chart with the real helm CLIs (Helm 3 and 4), by
// tag and by manifest digest, and checks the archive is byte for byte the one stored.
func TestHelmPull(t *testing.T) {
	helms := testenv.Helms(t)
	f := newFixture(t)
	srv := newServer(t, f.dir)
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, h := range helms {
		t.Run(h.Name, func(t *testing.T) { helmPull(t, h.Path, host, f) })
	}
}

// helmPull pulls f's chart from host with one helm CLI, by tag and by
// manifest digest.
func helmPull(t *testing.T, helm, host string, f *fixture) {
	home := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"by tag", []string{"oci://" + host + "/kbuild/demo", "--version", "1.0.0-1"}},
		{"by digest", []string{"oci://" + host + "/kbuild/demo@" + f.manifest}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"pull"}, tc.args...)
			args = append(args, "--plain-http", "--destination", out)
			cmd := exec.Command(helm, args...)
			cmd.Env = append(os.Environ(),
				"HOME="+home,
				"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
				"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
				"HELM_DATA_HOME="+filepath.Join(home, "data"),
				"HELM_REGISTRY_CONFIG="+filepath.Join(home, "registry.json"),
			)
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, b)
			}
			files, _ := filepath.Glob(filepath.Join(out, "*"))
			if len(files) != 1 {
				t.Fatalf("helm pull wrote %v, want one chart archive\n%s", files, b)
			}
			got, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, f.chart) {
				t.Errorf("pulled archive %s = %s, want %s", files[0], digestOf(got), f.layer)
			}
			t.Logf("helm pull wrote %s", filepath.Base(files[0]))
			if !strings.Contains(string(b), f.manifest) {
				t.Errorf("helm output does not name the manifest digest %s:\n%s", f.manifest, b)
			}
		})
	}
}
