package ociserve

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Media types the walk of a layout recognises as indexes and manifests.
const (
	mediaTypeOCIIndex       = "application/vnd.oci.image.index.v1+json"
	mediaTypeOCIManifest    = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeDockerList     = "application/vnd.docker.distribution.manifest.list.v2+json"
	mediaTypeDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"

	refNameAnnotation = "org.opencontainers.image.ref.name"
)

// maxManifestSize caps index.json and any manifest read into memory; the
// distribution spec lets registries refuse manifests over 4 MiB.
const maxManifestSize = 4 << 20

// descriptor is the part of an OCI content descriptor the server uses.
type descriptor struct {
	MediaType    string            `json:"mediaType"`
	Digest       string            `json:"digest"`
	Size         int64             `json:"size"`
	ArtifactType string            `json:"artifactType,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
}

// manifestDoc holds the fields of an image manifest or index that link to
// other content or describe it as a referrer.
type manifestDoc struct {
	MediaType    string            `json:"mediaType"`
	ArtifactType string            `json:"artifactType"`
	Config       *descriptor       `json:"config"`
	Layers       []descriptor      `json:"layers"`
	Manifests    []descriptor      `json:"manifests"`
	Subject      *descriptor       `json:"subject"`
	Annotations  map[string]string `json:"annotations"`
}

// repository is what one repository name serves.
type repository struct {
	// tags maps a tag to the manifest descriptor it names.
	tags map[string]descriptor
	// manifests holds every manifest reachable from the tags, by digest.
	manifests map[string]descriptor
	// blobs holds every digest reachable from the tags (manifests too).
	blobs map[string]bool
	// referrers maps a subject digest to the manifests that name it, as
	// the referrers API lists them.
	referrers map[string][]descriptor
}

// snapshot is the layout as one version of index.json describes it.
type snapshot struct {
	repos map[string]*repository
}

// nameRE is the repository name grammar of the OCI distribution spec.
var nameRE = regexp.MustCompile(`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*$`)

// tagRE is the tag grammar of the OCI distribution spec.
var tagRE = regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)

// splitRefName splits an org.opencontainers.image.ref.name value into a
// repository name and tag at the last ':'. ok is false when the value is
// not of the form <valid name>:<valid tag>.
func splitRefName(ref string) (name, tag string, ok bool) {
	i := strings.LastIndexByte(ref, ':')
	if i < 0 {
		return "", "", false
	}
	name, tag = ref[:i], ref[i+1:]
	if !nameRE.MatchString(name) || !tagRE.MatchString(tag) {
		return "", "", false
	}
	return name, tag, true
}

// parseDigest checks that d is "<algorithm>:<hex>" with a supported
// algorithm and the right length of lowercase hex, and returns a hash to
// verify content with.
func parseDigest(d string) (hash.Hash, error) {
	alg, hexPart, ok := strings.Cut(d, ":")
	if !ok {
		return nil, fmt.Errorf("digest %q: want <algorithm>:<hex>", d)
	}
	var h hash.Hash
	switch alg {
	case "sha256":
		h = sha256.New()
	case "sha512":
		h = sha512.New()
	default:
		return nil, fmt.Errorf("digest %q: unsupported algorithm %q (want sha256 or sha512)", d, alg)
	}
	if len(hexPart) != 2*h.Size() || strings.TrimLeft(hexPart, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("digest %q: want %d lowercase hex digits", d, 2*h.Size())
	}
	return h, nil
}

// blobPath returns the slash path of a blob inside the layout. d must have
// passed parseDigest.
func blobPath(d string) string {
	alg, hexPart, _ := strings.Cut(d, ":")
	return path.Join("blobs", alg, hexPart)
}

// ociLayout reads an OCI image layout through an os.Root, so that no path
// (or symlink) in it can reach outside the layout directory.
type ociLayout struct {
	root *os.Root
}

// readFile reads a small file of the layout, refusing one over max bytes.
func (l ociLayout) readFile(name string, max int64) ([]byte, error) {
	f, err := l.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, max)
	}
	return b, nil
}

// readManifest reads the manifest with digest d and checks that its bytes
// have that digest.
func (l ociLayout) readManifest(d string) ([]byte, error) {
	h, err := parseDigest(d)
	if err != nil {
		return nil, err
	}
	b, err := l.readFile(blobPath(d), maxManifestSize)
	if err != nil {
		return nil, err
	}
	h.Write(b)
	alg, _, _ := strings.Cut(d, ":")
	if got := alg + ":" + hex.EncodeToString(h.Sum(nil)); got != d {
		return nil, fmt.Errorf("blob %s: content digest is %s: the layout is corrupt", d, got)
	}
	return b, nil
}

// isManifestType reports whether a descriptor's media type is a manifest or
// index the server serves under /manifests/.
func isManifestType(mt string) bool {
	switch mt {
	case mediaTypeOCIIndex, mediaTypeOCIManifest, mediaTypeDockerList, mediaTypeDockerManifest:
		return true
	}
	return false
}

func isIndexType(mt string) bool {
	return mt == mediaTypeOCIIndex || mt == mediaTypeDockerList
}

// load parses index.json bytes and walks every tagged descriptor to find
// what each repository serves. A manifest that cannot be read ends the walk
// of its branch only: requests for it fail when they are made, with the
// reason.
func (l ociLayout) load(indexJSON []byte) (*snapshot, error) {
	var idx manifestDoc
	if err := json.Unmarshal(indexJSON, &idx); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	s := &snapshot{repos: map[string]*repository{}}
	for _, d := range idx.Manifests {
		name, tag, ok := splitRefName(d.Annotations[refNameAnnotation])
		if !ok || !isManifestType(d.MediaType) {
			continue
		}
		if _, err := parseDigest(d.Digest); err != nil {
			continue
		}
		r := s.repos[name]
		if r == nil {
			r = &repository{
				tags:      map[string]descriptor{},
				manifests: map[string]descriptor{},
				blobs:     map[string]bool{},
				referrers: map[string][]descriptor{},
			}
			s.repos[name] = r
		}
		r.tags[tag] = d
	}
	for _, r := range s.repos {
		for _, d := range r.tags {
			l.walk(r, d, 0)
		}
	}
	l.addReferrers(s, idx.Manifests)
	return s, nil
}

// referrer is a top-level manifest of the layout that names a subject.
type referrer struct {
	desc    descriptor // as the referrers API lists it
	subject string
}

// addReferrers adds each top-level manifest that names a subject (an
// attestation or signature, usually stored without a ref name) to every
// repository that serves its subject, together with its content. Referrers
// of referrers are followed.
func (l ociLayout) addReferrers(s *snapshot, top []descriptor) {
	var refs []referrer
	for _, d := range top {
		if !isManifestType(d.MediaType) || isIndexType(d.MediaType) {
			continue
		}
		b, err := l.readManifest(d.Digest)
		if err != nil {
			continue
		}
		var m manifestDoc
		if json.Unmarshal(b, &m) != nil || m.Subject == nil {
			continue
		}
		rd := descriptor{MediaType: d.MediaType, Digest: d.Digest, Size: d.Size, ArtifactType: m.ArtifactType, Annotations: m.Annotations}
		if rd.ArtifactType == "" && m.Config != nil {
			rd.ArtifactType = m.Config.MediaType
		}
		refs = append(refs, referrer{desc: rd, subject: m.Subject.Digest})
	}
	for changed := true; changed; {
		changed = false
		for _, r := range s.repos {
			for _, ref := range refs {
				if _, ok := r.manifests[ref.subject]; !ok || hasDigest(r.referrers[ref.subject], ref.desc.Digest) {
					continue
				}
				r.referrers[ref.subject] = append(r.referrers[ref.subject], ref.desc)
				l.walk(r, descriptor{MediaType: ref.desc.MediaType, Digest: ref.desc.Digest, Size: ref.desc.Size}, 0)
				changed = true
			}
		}
	}
	for _, r := range s.repos {
		for _, list := range r.referrers {
			sort.Slice(list, func(i, j int) bool { return list[i].Digest < list[j].Digest })
		}
	}
}

func hasDigest(ds []descriptor, d string) bool {
	for _, x := range ds {
		if x.Digest == d {
			return true
		}
	}
	return false
}

// maxDepth bounds how deeply nested indexes are followed.
const maxDepth = 8

func (l ociLayout) walk(r *repository, d descriptor, depth int) {
	if _, seen := r.manifests[d.Digest]; seen || depth > maxDepth {
		return
	}
	if _, err := parseDigest(d.Digest); err != nil {
		return
	}
	r.manifests[d.Digest] = d
	r.blobs[d.Digest] = true
	b, err := l.readManifest(d.Digest)
	if err != nil {
		return
	}
	var m manifestDoc
	if err := json.Unmarshal(b, &m); err != nil {
		return
	}
	if isIndexType(d.MediaType) {
		for _, c := range m.Manifests {
			if isManifestType(c.MediaType) {
				l.walk(r, c, depth+1)
			} else if _, err := parseDigest(c.Digest); err == nil {
				r.blobs[c.Digest] = true
			}
		}
		return
	}
	if m.Config != nil {
		r.blobs[m.Config.Digest] = true
	}
	for _, layer := range m.Layers {
		r.blobs[layer.Digest] = true
	}
}
