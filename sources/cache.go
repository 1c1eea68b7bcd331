package sources

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/spec"
)

// The cache directory holds:
//
//	blobs/sha256/<hex>        every fetched file, chart archive, image
//	                          manifest, git tree (as tar) and chart index
//	refs/git/<commit>-<key>   JSON {tree, blob}: which blob holds a git tree
//	refs/index/<key>          JSON {url, etag, lastModified, blob}: the last
//	                          index.yaml of a chart repository
//	refs/url/<key>            JSON {source, blob}: the blob a url source last
//	                          resolved to (a verified download or a fetch
//	                          matching a recipe's pin), for Pin offline
//	refs/oci/<key>            JSON {source, blob}: the same for an OCI chart
//	                          reference REGISTRY/REPO/NAME:TAG
//
// Blobs are written to a temporary name in their directory and renamed, so
// a reader never sees a partial file and processes sharing the cache never
// corrupt it. Every blob is re-hashed when opened; one whose content no
// longer matches its name is removed and counts as missing.
type cache struct {
	dir  string
	logf func(format string, args ...any)
}

// errNotCached is returned by cache.open for a missing or corrupted blob.
var errNotCached = errors.New("not in the cache")

// parseDigest accepts "sha256:<hex>" or a bare 64-hex digest and returns
// the "sha256:<hex>" form.
func parseDigest(s string) (string, error) {
	d := "sha256:" + strings.TrimPrefix(s, "sha256:")
	if _, err := spec.ParseDigest(d); err != nil {
		return "", fmt.Errorf("pin %q is not a sha256 digest: expected sha256:<64 lower-case hex digits>", s)
	}
	return d, nil
}

func (c *cache) blobPath(digest string) string {
	return filepath.Join(c.dir, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:"))
}

// open returns the blob with the given digest, verified and positioned at
// its start, or an error wrapping errNotCached. A blob whose content does
// not match its digest is removed.
func (c *cache) open(digest string) (*os.File, error) {
	p := c.blobPath(digest)
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", digest, errNotCached)
	}
	if err != nil {
		return nil, fmt.Errorf("open cache entry: %w", err)
	}
	got, _, err := hashReader(f)
	if err == nil && got == digest {
		if _, err = f.Seek(0, io.SeekStart); err == nil {
			return f, nil
		}
	}
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read cache entry %s: %w", p, err)
	}
	c.logf("cache entry %s is corrupted (its content hashes to %s); removing it", p, got)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove corrupted cache entry: %w", err)
	}
	return nil, fmt.Errorf("%s: %w (a corrupted copy was removed)", digest, errNotCached)
}

// remove deletes the blob with the digest, if present.
func (c *cache) remove(digest string) {
	if err := os.Remove(c.blobPath(digest)); err == nil {
		c.logf("removed %s from the cache", digest)
	}
}

// has reports whether a verified blob with the digest is in the cache.
func (c *cache) has(digest string) bool {
	f, err := c.open(digest)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// put streams r into the cache and returns its digest. At most limit bytes
// are read (limit < 0: no limit). verify, when not nil, is called with the
// digest and size once r is exhausted; if it or anything before it fails,
// the temporary file is removed and nothing is stored.
func (c *cache) put(r io.Reader, limit int64, verify func(got string, n int64) error) (string, error) {
	dir := filepath.Join(c.dir, "blobs", "sha256")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create cache directory: %w", err)
	}
	// The temporary file is named after a blob that is not one; CommitAs
	// names it after its digest.
	tmp, err := atomicfile.Create(filepath.Join(dir, "incoming"), 0o644)
	if err != nil {
		return "", fmt.Errorf("create cache entry: %w", err)
	}
	defer tmp.Abort()
	if limit >= 0 {
		r = &limitReader{r: r, n: limit}
	}
	h := sha256.New()
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	n, err := io.CopyBuffer(io.MultiWriter(tmp, h), struct{ io.Reader }{r}, *buf)
	if err != nil {
		return "", err
	}
	got := "sha256:" + hex.EncodeToString(h.Sum(nil))
	if verify != nil {
		if err := verify(got, n); err != nil {
			return "", err
		}
	}
	if err := tmp.CommitAs(c.blobPath(got)); err != nil {
		return "", fmt.Errorf("store cache entry: %w", err)
	}
	return got, nil
}

// limitReader reads at most n bytes and fails with ErrTooLarge if more
// follow, unlike io.LimitReader which ends silently.
type limitReader struct {
	r io.Reader
	n int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p))-1 > l.n {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, ErrTooLarge
	}
	return n, err
}

// hashReader returns the sha256 digest ("sha256:<hex>") and length of
// everything r yields. It is the streaming hash the cache uses.
func hashReader(r io.Reader) (string, int64, error) {
	h := sha256.New()
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	n, err := io.CopyBuffer(h, struct{ io.Reader }{r}, *buf)
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, err
}

// copyBuffers holds the buffers hashReader and putBlob copy through. A
// fresh 1 MiB buffer per file made hashing a 30-file chart directory
// allocate 30 MiB (and the collector scan it); 64 KiB is as fast for
// sha256 and is reused.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// writeRef atomically writes a small reference file under refs/.
func (c *cache) writeRef(rel string, data []byte) error {
	p := filepath.Join(c.dir, "refs", rel)
	if err := atomicfile.WriteFile(p, data, 0o644); err != nil {
		return fmt.Errorf("write cache reference %s: %w", p, err)
	}
	return nil
}

// readRef reads a reference file; a missing one is errNotCached.
func (c *cache) readRef(rel string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(c.dir, "refs", rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNotCached
	}
	return b, err
}

// keyOf returns a short file-name-safe key for an arbitrary string.
func keyOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}
