package ociserve

import (
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

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// refNameAnnotation names a top-level descriptor of index.json
// (<name>:<tag>), as go-containerregistry's layout.WithAnnotations and
// skopeo write it.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// maxManifestSize caps index.json and any manifest read into memory; the
// distribution spec lets registries refuse manifests over 4 MiB.
const maxManifestSize = 4 << 20

// repository is what one repository name serves.
type repository struct {
	// tags maps a tag to the manifest descriptor it names.
	tags map[string]v1.Descriptor
	// manifests holds every manifest reachable from the tags, by digest.
	manifests map[string]v1.Descriptor
	// blobs holds every digest reachable from the tags (manifests too).
	blobs map[string]bool
	// referrers maps a subject digest to the manifests that name it, as
	// the referrers API lists them.
	referrers map[string][]v1.Descriptor
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
// algorithm (sha256, sha512) and the right length of lowercase hex, and
// returns a hash to verify content with.
func parseDigest(d string) (hash.Hash, error) {
	h, err := v1.NewHash(d)
	if err != nil {
		return nil, fmt.Errorf("digest %q: %w", d, err)
	}
	return v1.Hasher(h.Algorithm)
}

// validDigest reports whether h, read from a layout, is a digest the
// server can verify content with.
func validDigest(h v1.Hash) bool {
	_, err := parseDigest(h.String())
	return err == nil
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
func isManifestType(mt types.MediaType) bool { return mt.IsImage() || mt.IsIndex() }

// descriptors decodes a list of descriptors one by one, leaving out each
// that is not a descriptor (a digest that does not parse, say): a broken
// entry of a layout ends only its own branch.
func descriptors(raw []json.RawMessage) []v1.Descriptor {
	var ds []v1.Descriptor
	for _, r := range raw {
		var d v1.Descriptor
		if json.Unmarshal(r, &d) == nil {
			ds = append(ds, d)
		}
	}
	return ds
}

// lenientIndex is an image index whose descriptors are decoded one by one
// (descriptors).
type lenientIndex struct {
	Manifests []json.RawMessage `json:"manifests"`
}

// load parses index.json bytes and walks every tagged descriptor to find
// what each repository serves. A manifest that cannot be read ends the walk
// of its branch only: requests for it fail when they are made, with the
// reason.
func (l ociLayout) load(indexJSON []byte) (*snapshot, error) {
	var idx lenientIndex
	if err := json.Unmarshal(indexJSON, &idx); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	top := descriptors(idx.Manifests)
	s := &snapshot{repos: map[string]*repository{}}
	for _, d := range top {
		name, tag, ok := splitRefName(d.Annotations[refNameAnnotation])
		if !ok || !isManifestType(d.MediaType) || !validDigest(d.Digest) {
			continue
		}
		r := s.repos[name]
		if r == nil {
			r = &repository{
				tags:      map[string]v1.Descriptor{},
				manifests: map[string]v1.Descriptor{},
				blobs:     map[string]bool{},
				referrers: map[string][]v1.Descriptor{},
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
	l.addReferrers(s, top)
	return s, nil
}

// referrer is a top-level manifest of the layout that names a subject.
type referrer struct {
	desc    v1.Descriptor // as the referrers API lists it
	subject string
}

// addReferrers adds each top-level manifest that names a subject (an
// attestation or signature, usually stored without a ref name) to every
// repository that serves its subject, together with its content. Referrers
// of referrers are followed.
func (l ociLayout) addReferrers(s *snapshot, top []v1.Descriptor) {
	var refs []referrer
	for _, d := range top {
		if !d.MediaType.IsImage() || !validDigest(d.Digest) {
			continue
		}
		b, err := l.readManifest(d.Digest.String())
		if err != nil {
			continue
		}
		var m v1.Manifest
		if json.Unmarshal(b, &m) != nil || m.Subject == nil {
			continue
		}
		rd := v1.Descriptor{MediaType: d.MediaType, Digest: d.Digest, Size: d.Size, ArtifactType: m.ArtifactType, Annotations: m.Annotations}
		if rd.ArtifactType == "" {
			rd.ArtifactType = string(m.Config.MediaType)
		}
		refs = append(refs, referrer{desc: rd, subject: m.Subject.Digest.String()})
	}
	for changed := true; changed; {
		changed = false
		for _, r := range s.repos {
			for _, ref := range refs {
				if _, ok := r.manifests[ref.subject]; !ok || hasDigest(r.referrers[ref.subject], ref.desc.Digest) {
					continue
				}
				r.referrers[ref.subject] = append(r.referrers[ref.subject], ref.desc)
				l.walk(r, v1.Descriptor{MediaType: ref.desc.MediaType, Digest: ref.desc.Digest, Size: ref.desc.Size}, 0)
				changed = true
			}
		}
	}
	for _, r := range s.repos {
		for _, list := range r.referrers {
			sort.Slice(list, func(i, j int) bool { return list[i].Digest.String() < list[j].Digest.String() })
		}
	}
}

func hasDigest(ds []v1.Descriptor, d v1.Hash) bool {
	for _, x := range ds {
		if x.Digest == d {
			return true
		}
	}
	return false
}

// maxDepth bounds how deeply nested indexes are followed.
const maxDepth = 8

// walk adds d and what it reaches (an index's manifests, a manifest's
// config and layers) to r, up to maxDepth nested indexes.
func (l ociLayout) walk(r *repository, d v1.Descriptor, depth int) {
	dg := d.Digest.String()
	if _, seen := r.manifests[dg]; seen || depth > maxDepth || !validDigest(d.Digest) {
		return
	}
	r.manifests[dg] = d
	r.blobs[dg] = true
	b, err := l.readManifest(dg)
	if err != nil {
		return
	}
	if d.MediaType.IsIndex() {
		var m lenientIndex
		if err := json.Unmarshal(b, &m); err != nil {
			return
		}
		for _, c := range descriptors(m.Manifests) {
			if isManifestType(c.MediaType) {
				l.walk(r, c, depth+1)
			} else if validDigest(c.Digest) {
				r.blobs[c.Digest.String()] = true
			}
		}
		return
	}
	var m v1.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return
	}
	if m.Config.Digest != (v1.Hash{}) {
		r.blobs[m.Config.Digest.String()] = true
	}
	for _, layer := range m.Layers {
		r.blobs[layer.Digest.String()] = true
	}
}
