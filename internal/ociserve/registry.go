package ociserve

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Registry is an http.Handler that serves an OCI image layout as a
// read-only OCI distribution API under /v2/. It is safe for concurrent use.
type Registry struct {
	dir string

	mu       sync.Mutex
	indexSum [sha256.Size]byte
	snap     *snapshot
}

var _ http.Handler = (*Registry)(nil)

// New returns a Registry serving the OCI image layout in dir. It fails when
// dir holds no readable, well-formed index.json. The layout is read again
// whenever index.json changes.
func New(dir string) (*Registry, error) {
	r := &Registry{dir: dir}
	if _, err := r.snapshot(); err != nil {
		return nil, err
	}
	return r, nil
}

// open opens the layout directory. Each request opens it afresh, so a
// layout rewritten in place is seen and no descriptor is held open.
func (r *Registry) open() (ociLayout, error) {
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		return ociLayout{}, fmt.Errorf("oci layout %s: %w", r.dir, err)
	}
	return ociLayout{root: root}, nil
}

// snapshot returns the parsed layout, re-walking it when index.json has
// changed since the last call.
func (r *Registry) snapshot() (*snapshot, error) {
	l, err := r.open()
	if err != nil {
		return nil, err
	}
	defer l.root.Close()
	return r.snapshotOf(l)
}

func (r *Registry) snapshotOf(l ociLayout) (*snapshot, error) {
	b, err := l.readFile("index.json", maxManifestSize)
	if err != nil {
		return nil, fmt.Errorf("oci layout %s: %w; is it an OCI image layout (as written by the build)?", r.dir, err)
	}
	sum := sha256.Sum256(b)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.snap != nil && sum == r.indexSum {
		return r.snap, nil
	}
	s, err := l.load(b)
	if err != nil {
		return nil, fmt.Errorf("oci layout %s: %w", r.dir, err)
	}
	r.snap, r.indexSum = s, sum
	return s, nil
}

// Error codes of the OCI distribution spec that this server returns.
const (
	codeBlobUnknown     = "BLOB_UNKNOWN"
	codeDigestInvalid   = "DIGEST_INVALID"
	codeManifestUnknown = "MANIFEST_UNKNOWN"
	codeNameInvalid     = "NAME_INVALID"
	codeNameUnknown     = "NAME_UNKNOWN"
	codeUnsupported     = "UNSUPPORTED"
	codeUnknown         = "UNKNOWN"
	codeNotFound        = "NOT_FOUND"
	codePaginationBad   = "PAGINATION_NUMBER_INVALID"
)

// apiError is one entry of an OCI error response body.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, status int, code, format string, args ...any) {
	b, _ := json.Marshal(struct {
		Errors []apiError `json:"errors"`
	}{[]apiError{{Code: code, Message: fmt.Sprintf(format, args...)}}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// writeJSON answers 200 with v encoded as JSON of the given media type.
func writeJSON(w http.ResponseWriter, mediaType string, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// ServeHTTP answers one request of the distribution API. Paths outside /v2
// are 404.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	p := req.URL.Path
	if p != "/v2" && !strings.HasPrefix(p, "/v2/") {
		writeError(w, http.StatusNotFound, codeNotFound, "%s is not part of the distribution API (/v2/)", p)
		return
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, codeUnsupported, "%s %s: this registry serves a local OCI layout read-only; push to a real registry instead", req.Method, p)
		return
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(p, "/v2"), "/")
	if rest == "" {
		writeJSON(w, "application/json", struct{}{})
		return
	}
	if rest == "_catalog" {
		r.serveCatalog(w, req)
		return
	}
	// The name may hold slashes, so the route is read from the end:
	// <name>/manifests/<ref>, <name>/blobs/<digest>, <name>/tags/list.
	segs := strings.Split(rest, "/")
	n := len(segs)
	var name, kind, ref string
	switch {
	case n >= 3 && segs[n-2] == "tags" && segs[n-1] == "list":
		name, kind = strings.Join(segs[:n-2], "/"), "tags"
	case n >= 3 && (segs[n-2] == "manifests" || segs[n-2] == "blobs" || segs[n-2] == "referrers"):
		name, kind, ref = strings.Join(segs[:n-2], "/"), segs[n-2], segs[n-1]
	default:
		writeError(w, http.StatusNotFound, codeNotFound, "%s: unknown route; want /v2/<name>/manifests/<reference>, /v2/<name>/blobs/<digest>, /v2/<name>/tags/list or /v2/<name>/referrers/<digest>", p)
		return
	}
	if !nameRE.MatchString(name) {
		writeError(w, http.StatusBadRequest, codeNameInvalid, "repository name %q is not valid", name)
		return
	}
	l, err := r.open()
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeUnknown, "%v", err)
		return
	}
	defer l.root.Close()
	s, err := r.snapshotOf(l)
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeUnknown, "%v", err)
		return
	}
	repo := s.repos[name]
	if repo == nil {
		writeError(w, http.StatusNotFound, codeNameUnknown, "repository %q is not in the layout (it has %d repositories; see /v2/_catalog)", name, len(s.repos))
		return
	}
	switch kind {
	case "tags":
		serveList(w, req, "tags", name, slices.Sorted(maps.Keys(repo.tags)))
	case "manifests":
		serveManifest(w, req, l, name, repo, ref)
	case "blobs":
		serveBlob(w, req, l, name, repo, ref)
	case "referrers":
		serveReferrers(w, req, repo, ref)
	}
}

// serveReferrers lists the manifests that name dgst as their subject, as an
// image index, filtered by the artifactType query parameter when given. A
// subject without referrers (or unknown) gets an empty list, as the
// distribution spec asks.
func serveReferrers(w http.ResponseWriter, req *http.Request, repo *repository, dgst string) {
	if _, err := parseDigest(dgst); err != nil {
		writeError(w, http.StatusBadRequest, codeDigestInvalid, "%v", err)
		return
	}
	list := []v1.Descriptor{}
	at := req.URL.Query().Get("artifactType")
	for _, d := range repo.referrers[dgst] {
		if at == "" || d.ArtifactType == at {
			list = append(list, d)
		}
	}
	if at != "" {
		w.Header().Set("OCI-Filters-Applied", "artifactType")
	}
	writeJSON(w, string(types.OCIImageIndex), v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: list})
}

func serveManifest(w http.ResponseWriter, req *http.Request, l ociLayout, name string, repo *repository, ref string) {
	var d v1.Descriptor
	var ok bool
	if strings.Contains(ref, ":") {
		if _, err := parseDigest(ref); err != nil {
			writeError(w, http.StatusBadRequest, codeDigestInvalid, "%v", err)
			return
		}
		d, ok = repo.manifests[ref]
	} else {
		d, ok = repo.tags[ref]
	}
	if !ok {
		writeError(w, http.StatusNotFound, codeManifestUnknown, "manifest %s:%s is not in the layout", name, ref)
		return
	}
	dg := d.Digest.String()
	b, err := l.readManifest(dg)
	if errors.Is(err, fs.ErrNotExist) {
		writeError(w, http.StatusNotFound, codeManifestUnknown, "manifest %s@%s: its blob is missing from the layout", name, dg)
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeUnknown, "manifest %s@%s: %v", name, dg, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", string(d.MediaType))
	h.Set("Docker-Content-Digest", dg)
	h.Set("Etag", `"`+dg+`"`)
	http.ServeContent(w, req, "", time.Time{}, bytes.NewReader(b))
}

func serveBlob(w http.ResponseWriter, req *http.Request, l ociLayout, name string, repo *repository, dgst string) {
	if _, err := parseDigest(dgst); err != nil {
		writeError(w, http.StatusBadRequest, codeDigestInvalid, "%v", err)
		return
	}
	if !repo.blobs[dgst] {
		writeError(w, http.StatusNotFound, codeBlobUnknown, "blob %s is not in repository %s", dgst, name)
		return
	}
	f, err := l.root.Open(blobPath(dgst))
	if errors.Is(err, fs.ErrNotExist) {
		writeError(w, http.StatusNotFound, codeBlobUnknown, "blob %s of repository %s is missing from the layout", dgst, name)
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeUnknown, "blob %s: %v", dgst, err)
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		writeError(w, http.StatusInternalServerError, codeUnknown, "blob %s: not a regular file in the layout", dgst)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Docker-Content-Digest", dgst)
	h.Set("Etag", `"`+dgst+`"`)
	http.ServeContent(w, req, "", time.Time{}, f)
}

func (r *Registry) serveCatalog(w http.ResponseWriter, req *http.Request) {
	s, err := r.snapshot()
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeUnknown, "%v", err)
		return
	}
	serveList(w, req, "repositories", "", slices.Sorted(maps.Keys(s.repos)))
}

// serveList writes a sorted tag or repository list, paginated by the n and
// last query parameters as the distribution spec describes, with a Link
// header to the next page.
func serveList(w http.ResponseWriter, req *http.Request, field, name string, all []string) {
	q := req.URL.Query()
	if last := q.Get("last"); last != "" {
		i := sort.SearchStrings(all, last)
		if i < len(all) && all[i] == last {
			i++
		}
		all = all[i:]
	}
	if ns := q.Get("n"); ns != "" {
		n, err := strconv.Atoi(ns)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, codePaginationBad, "n=%q: want a number >= 0", ns)
			return
		}
		if n < len(all) {
			all = all[:n]
			if n > 0 {
				next := url.Values{"n": {ns}, "last": {all[n-1]}}
				w.Header().Set("Link", fmt.Sprintf("<%s?%s>; rel=\"next\"", req.URL.Path, next.Encode()))
			}
		}
	}
	if all == nil {
		all = []string{}
	}
	if field == "tags" {
		writeJSON(w, "application/json", struct {
			Name string   `json:"name"`
			Tags []string `json:"tags"`
		}{name, all})
		return
	}
	writeJSON(w, "application/json", struct {
		Repositories []string `json:"repositories"`
	}{all})
}
