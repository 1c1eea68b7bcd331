package bundle

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/fault"
	"kbuild.dev/kbuild/sitelayout"
)

// ErrBadBundle is wrapped by every refusal of a bundle's form or content:
// a tar that escapes, is truncated or holds links, a blob that does not
// match its digest, a blob missing, or an entry the signed index does not
// pin. A refusal of the index itself is an *index.VerificationError.
var ErrBadBundle = fault.New(fault.Refused, "bad bundle")

// ErrPartialIndex is wrapped by Import's error about a mirror that refuses
// an image index of which the bundle holds only some images (a bundle made
// for some platforms, WithPlatforms): such a mirror needs them all.
var ErrPartialIndex = errors.New("a partial image index")

// ErrNoTrustedRoot is wrapped by the error about a keyless signature that
// was to be checked without a Sigstore trusted root (WithTrustedRoot).
var ErrNoTrustedRoot = errors.New("a keyless signature, and no Sigstore trusted root to verify it")

func bad(file, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrBadBundle, file, fmt.Sprintf(format, args...))
}

// metaName matches the files a bundle's metadata may hold: the signed
// site's files, SBOMs, provenance, build info, the charts' Sigstore
// bundles, the public keys beside the index (information only) and
// bundle.json.
var metaName = regexp.MustCompile(`^(index\.yaml|index\.yaml\.sig|root\.yaml|root/[1-9][0-9]{0,3}\.yaml|bundle\.json|sbom/[a-z0-9][a-z0-9._+-]*\.cdx\.json|provenance/[a-z0-9][a-z0-9._+-]*\.intoto\.json|build/[a-z0-9][a-z0-9._+-]*\.build\.yaml|sigstore/[0-9a-f]{64}/[0-9a-f]{64}\.json|sigstore/(trusted_root|keyless)\.json|keys/(index|[0-9a-f]{64})\.pub)$`)

// maxEntries caps the files a bundle may hold.
const maxEntries = 1 << 20

// opened is a bundle read once through, every blob hashed and its place
// in the file recorded, so that blobs are pushed straight from the file.
type opened struct {
	file    string
	f       *os.File
	actual  map[string]string // blob digest (its name) -> sha256 of its content, when they differ
	sizes   map[string]int64
	offsets map[string]int64 // where each blob's bytes start in the file
	top     v1.IndexManifest // the bundle index
	meta    v1.Manifest      // the metadata manifest
	files   map[string][]byte
	c       Contents
}

func (b *opened) Close() error { return b.f.Close() }

// has reports whether the bundle holds blob dg.
func (b *opened) has(dg string) bool {
	_, ok := b.sizes[dg]
	return ok
}

// blob returns a reader of blob dg's bytes in the bundle file. It checks
// them again against dg while they are read, so a file changed after open
// fails at EOF rather than pushing other bytes.
func (b *opened) blob(dg string) io.ReadCloser {
	r := io.NewSectionReader(b.f, b.offsets[dg], b.sizes[dg])
	return &verifyingReader{r: r, h: sha256.New(), want: dg, file: b.file}
}

// verifyingReader hashes what it reads and fails at EOF on a mismatch.
type verifyingReader struct {
	r    io.Reader
	h    hash.Hash
	want string
	file string
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	if err == io.EOF {
		if got := "sha256:" + hex.EncodeToString(v.h.Sum(nil)); got != v.want {
			return n, bad(v.file, "blob %s changed while it was pushed (now %s)", v.want, got)
		}
	}
	return n, err
}

func (v *verifyingReader) Close() error { return nil }

// check returns an error when blob dg is missing, not of the descriptor's
// size, or holds other content. what says whose blob it is.
func (b *opened) check(d v1.Descriptor, what string) error {
	dg := d.Digest.String()
	if !b.has(dg) {
		return bad(b.file, "%s: blob %s is missing from the bundle", what, dg)
	}
	if got, ok := b.actual[dg]; ok {
		return bad(b.file, "%s: blob %s holds content with digest %s; the bundle was changed after it was made", what, dg, got)
	}
	if b.sizes[dg] != d.Size {
		return bad(b.file, "%s: blob %s is %d bytes, its descriptor says %d", what, dg, b.sizes[dg], d.Size)
	}
	return nil
}

// checkAllBlobs refuses the bundle when a blob holds content other than
// its name says, whether or not anything refers to it: the last check of
// Inspect and of Import (before anything is pushed) alike, after the
// blobs that are referred to were checked and named with what uses them.
func (b *opened) checkAllBlobs() error {
	for _, dg := range slices.Sorted(maps.Keys(b.actual)) {
		return bad(b.file, "blob %s holds content with digest %s; the bundle was changed after it was made (nothing in it refers to that blob, but a bundle must be exactly what was made): copy it again from where it was made", dg, b.actual[dg])
	}
	return nil
}

// readBlob returns a blob of at most limit bytes, checked against d.
func (b *opened) readBlob(d v1.Descriptor, what string, limit int64) ([]byte, error) {
	if err := b.check(d, what); err != nil {
		return nil, err
	}
	if d.Size > limit {
		return nil, bad(b.file, "%s: blob %s is %d bytes, more than the %d allowed", what, d.Digest, d.Size, limit)
	}
	return io.ReadAll(b.blob(d.Digest.String()))
}

// isGzip reports whether f starts with the gzip magic bytes (magic is a
// buffer of two).
func isGzip(f *os.File, magic []byte) bool {
	n, _ := f.ReadAt(magic, 0)
	return n == 2 && magic[0] == 0x1f && magic[1] == 0x8b
}

// open reads file through once, refusing anything but oci-layout,
// index.json and blobs/sha256/<hex> regular files, hashing every blob and
// recording where it is; then it reads the bundle index and its metadata.
// Nothing is extracted. Its steps, in order: the tar's entries (scan), the
// layout's index and the bundle index (readTop), the metadata files
// (readMeta), the contents (readContents).
func open(file string, o *options) (_ *opened, rerr error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	b := &opened{file: file, f: f, actual: map[string]string{}, sizes: map[string]int64{}, offsets: map[string]int64{}, files: map[string][]byte{}}
	defer func() {
		if rerr != nil {
			b.Close()
		}
	}()
	indexJSON, err := b.scan(o)
	if err != nil {
		return nil, err
	}
	if err := b.readTop(indexJSON); err != nil {
		return nil, err
	}
	if err := b.readMeta(); err != nil {
		return nil, err
	}
	if err := b.readContents(); err != nil {
		return nil, err
	}
	return b, nil
}

// scan reads the tar through once: it refuses every entry but
// oci-layout, index.json and blobs/sha256/<hex> regular files, hashes
// each blob and records where it is, and returns index.json.
func (b *opened) scan(o *options) ([]byte, error) {
	file := b.file
	var indexJSON []byte
	seen := map[string]bool{}
	pos := &countingReader{r: b.f}
	tr := tar.NewReader(pos)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if isGzip(b.f, make([]byte, 2)) {
				return nil, bad(file, "the file is gzip-compressed; a bundle is a plain tar: decompress it (gunzip) and import the .tar")
			}
			return nil, bad(file, "not a complete tar (%v); the file is truncated or not a bundle, copy it again", err)
		}
		clean, skip, err := b.checkEntry(h, seen)
		if err != nil {
			return nil, err
		}
		if skip {
			continue
		}
		switch {
		case clean == "oci-layout":
			if _, err := readEntry(tr, h, 4096, file); err != nil {
				return nil, err
			}
		case clean == "index.json":
			if indexJSON, err = readEntry(tr, h, maxManifestSize, file); err != nil {
				return nil, err
			}
		case strings.HasPrefix(clean, "blobs/sha256/") && validDigest("sha256:"+strings.TrimPrefix(clean, "blobs/sha256/")):
			if err := b.hashBlob(tr, h, "sha256:"+strings.TrimPrefix(clean, "blobs/sha256/"), pos.n, o.maxBlob); err != nil {
				return nil, err
			}
		default:
			return nil, bad(file, "unexpected file %s; a bundle holds only oci-layout, index.json and blobs/sha256/<hex>", quoteName(h.Name))
		}
	}
	if indexJSON == nil {
		return nil, bad(file, "no index.json: not an OCI image layout")
	}
	return indexJSON, nil
}

// checkEntry refuses a tar entry that leaves the bundle, is not a regular
// file (the two blob directories are skipped), is sparse, is one too many,
// or appears twice. It returns the entry's clean name.
func (b *opened) checkEntry(h *tar.Header, seen map[string]bool) (clean string, skip bool, err error) {
	file, n := b.file, h.Name
	clean = path.Clean(n)
	if strings.HasPrefix(n, "/") || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(n, "\\") {
		return "", false, bad(file, "entry %s leaves the bundle; refusing to extract it", quoteName(n))
	}
	switch h.Typeflag {
	case tar.TypeDir:
		if clean != "blobs" && clean != "blobs/sha256" {
			return "", false, bad(file, "unexpected directory %s; a bundle holds only oci-layout, index.json and blobs/sha256/", quoteName(n))
		}
		return clean, true, nil
	case tar.TypeReg:
	case tar.TypeSymlink, tar.TypeLink:
		return "", false, bad(file, "entry %s is a link (to %s); a bundle holds only regular files", quoteName(n), quoteName(h.Linkname))
	default:
		return "", false, bad(file, "entry %s is of tar type %q; a bundle holds only regular files", quoteName(n), string(h.Typeflag))
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return "", false, bad(file, "entry %s is a sparse file; a bundle holds only regular files", quoteName(n))
		}
	}
	if len(seen) >= maxEntries {
		return "", false, bad(file, "more than %d entries; not a bundle kbuild made", maxEntries)
	}
	if seen[clean] {
		return "", false, bad(file, "entry %s appears twice", quoteName(n))
	}
	seen[clean] = true
	return clean, false, nil
}

// hashBlob hashes the blob entry h named dg, at offset in the file,
// recording its offset and size and, when its content has another
// digest, that digest (refused when the blob is used).
func (b *opened) hashBlob(tr *tar.Reader, h *tar.Header, dg string, offset, maxBlob int64) error {
	if h.Size > maxBlob {
		return bad(b.file, "blob %s is %d bytes, more than the %d allowed", dg, h.Size, maxBlob)
	}
	b.offsets[dg] = offset // archive/tar reads no further than the header
	sum := sha256.New()
	if _, err := io.Copy(sum, tr); err != nil {
		return truncated(b.file, h, err)
	}
	got := "sha256:" + hex.EncodeToString(sum.Sum(nil))
	b.sizes[dg] = h.Size
	if got != dg {
		b.actual[dg] = got
	}
	return nil
}

// readTop reads the layout's index (one manifest, of the bundle's
// artifact type), the bundle index it names, and the metadata manifest
// that index must begin with.
func (b *opened) readTop(indexJSON []byte) error {
	file := b.file
	var ix v1.IndexManifest
	if err := json.Unmarshal(indexJSON, &ix); err != nil {
		return bad(file, "index.json: %v", err)
	}
	if len(ix.Manifests) != 1 || ix.Manifests[0].ArtifactType != ArtifactType {
		return bad(file, "index.json lists %d manifests; a kbuild bundle lists one, of artifact type %s", len(ix.Manifests), ArtifactType)
	}
	raw, err := b.readBlob(ix.Manifests[0], "the bundle index", maxManifestSize)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &b.top); err != nil {
		return bad(file, "the bundle index: %v", err)
	}
	if len(b.top.Manifests) == 0 || b.top.Manifests[0].Annotations[AnnotationKind] != kindMetadata {
		return bad(file, "the bundle index does not begin with its metadata manifest")
	}
	raw, err = b.readBlob(b.top.Manifests[0], "the metadata manifest", maxManifestSize)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &b.meta); err != nil {
		return bad(file, "the metadata manifest: %v", err)
	}
	return nil
}

// readMeta reads the metadata manifest's layers into b.files, each a file
// a bundle carries, named once, within its size limit.
func (b *opened) readMeta() error {
	for _, l := range b.meta.Layers {
		name := l.Annotations[AnnotationTitle]
		if !metaName.MatchString(name) || b.files[name] != nil {
			return bad(b.file, "metadata layer %s is named %s: not a file a bundle carries, or named twice", l.Digest, quoteName(name))
		}
		limit := int64(maxSiteFile)
		if name == sitelayout.IndexFile {
			limit = index.MaxIndexSize
		}
		data, err := b.readBlob(l, "metadata file "+name, limit)
		if err != nil {
			return err
		}
		b.files[name] = data
	}
	return nil
}

// readContents decodes the bundle's contents file, strictly.
func (b *opened) readContents() error {
	cb := b.files[ContentsFile]
	if cb == nil {
		return bad(b.file, "no %s in the metadata", ContentsFile)
	}
	dec := json.NewDecoder(bytes.NewReader(cb))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b.c); err != nil {
		return bad(b.file, "%s: %v", ContentsFile, err)
	}
	return nil
}

func readEntry(tr *tar.Reader, h *tar.Header, limit int64, file string) ([]byte, error) {
	if h.Size > limit {
		return nil, bad(file, "%s is %d bytes, more than the %d allowed", cutName(h.Name), h.Size, limit)
	}
	data, err := io.ReadAll(tr)
	if err != nil {
		return nil, truncated(file, h, err)
	}
	return data, nil
}

func truncated(file string, h *tar.Header, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return bad(file, "truncated in %s (%d bytes expected): the file was cut short, copy it again", cutName(h.Name), h.Size)
	}
	return bad(file, "%s: %v", cutName(h.Name), err)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// quoteName quotes a name from the bundle for a message, cut to 120 bytes
// with its full length said, so that a hostile entry name (300 KB) cannot
// fill a log line.
func quoteName(s string) string {
	if len(s) <= 120 {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:120]) + fmt.Sprintf("… (%d bytes)", len(s))
}

// cutName is a name from the bundle cut to 120 bytes with its full length
// said, unquoted.
func cutName(s string) string {
	if len(s) <= 120 {
		return s
	}
	return strings.ToValidUTF8(s[:120], "") + fmt.Sprintf("… (%d bytes)", len(s))
}
