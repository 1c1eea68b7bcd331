package siteread

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/addrspace"
	"kbuild.dev/kbuild/internal/fault"
	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/trust"
)

// ErrNotFound is wrapped by Fetch's error when the file does not exist (a
// missing local file or HTTP 404 or 410).
var ErrNotFound = errors.New("not found")

// ErrUnavailable is wrapped by the error of a fetch the server answered
// with 5xx or 429: worth retrying later.
var ErrUnavailable = fault.New(fault.Unavailable, "server unavailable")

// MaxRootVersions caps how many root versions Roots fetches.
const MaxRootVersions = 1000

// Site is a published site: a directory or an http(s) base URL, and the
// name of its index file.
type Site struct {
	base   string // directory, or URL ending in "/"
	remote bool
	index  string // "index.yaml"
	client *http.Client
	sigFor func(sha256Hex string) string
}

// Option configures New.
type Option func(*Site)

// WithTimeout sets the idle timeout of each HTTP request: connecting,
// waiting for the response and every gap in its body (default
// netdeadline.DefaultIdle, 20s). A whole body is further bounded by
// netdeadline.Budget of its size.
func WithTimeout(d time.Duration) Option {
	return func(s *Site) { s.client.Transport = netdeadline.Transport(http.DefaultTransport, d) }
}

// WithSignatureFor names, for the sha256 (hex) of an index, the other file a publisher
// writes its signature to (by-hash/sha256/<hex>.sig, never changed once
// written). Verify checks that file too when the site has it — an extra
// check for readers that fetch the signature by digest, never a
// substitute for index.yaml.sig, which is the only signature kubepkg
// reads — and names it when index.yaml.sig is refused.
func WithSignatureFor(name func(sha256Hex string) string) Option {
	return func(s *Site) { s.sigFor = name }
}

// New returns the site of ref: a directory, a path to its index.yaml, an
// http(s) URL of the site or of its index.yaml.
func New(ref string, opts ...Option) (*Site, error) {
	s := &Site{index: sitelayout.IndexFile, client: &http.Client{Transport: netdeadline.Transport(http.DefaultTransport, netdeadline.DefaultIdle)}}
	for _, o := range opts {
		o(s)
	}
	if strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") {
		u, err := url.Parse(ref)
		if err != nil {
			return nil, fmt.Errorf("site URL %q: %w", ref, err)
		}
		if strings.HasSuffix(u.Path, ".yaml") {
			s.index = path.Base(u.Path)
			u.Path = path.Dir(u.Path)
		}
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
		}
		u.RawQuery, u.Fragment = "", ""
		s.base, s.remote = u.String(), true
		return s, nil
	}
	if strings.Contains(ref, "://") {
		return nil, fmt.Errorf("site %q: only http, https and local paths are supported", ref)
	}
	if strings.HasSuffix(ref, ".yaml") {
		s.index = filepath.Base(ref)
		ref = filepath.Dir(ref)
	}
	s.base = ref
	return s, nil
}

// IndexName is the index file's name in the site, normally "index.yaml".
func (s *Site) IndexName() string { return s.index }

// Location returns where name is: a path or a URL.
func (s *Site) Location(name string) string {
	if s.remote {
		return s.base + name
	}
	return filepath.Join(s.base, filepath.FromSlash(name))
}

// Fetch returns the file name (a slash-separated path in the site) if it
// is at most limit bytes. A missing file gives an error wrapping
// ErrNotFound. A local file is read with ReadFile.
func (s *Site) Fetch(ctx context.Context, name string, limit int64) ([]byte, error) {
	loc := s.Location(name)
	if !s.remote {
		return ReadFile(loc, limit)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", loc, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return nil, fmt.Errorf("GET %s: %s: %w", loc, resp.Status, ErrNotFound)
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return nil, fmt.Errorf("GET %s: %s: %w", loc, resp.Status, ErrUnavailable)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: %s", loc, resp.Status)
	case resp.ContentLength > limit:
		return nil, tooLarge(loc, "%d bytes, more than the %d allowed", resp.ContentLength, limit)
	}
	return readCapped(resp.Body, loc, limit, resp.ContentLength)
}

// ReadFile returns the local file path if it is at most limit bytes; a
// missing file gives an error wrapping ErrNotFound. The file is read into
// memory, never mapped: another process may write it while its bytes are
// verified and used (a mapping shared with the file would change under
// the parsed index after its signature was checked).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64 = -1
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	if size > limit {
		return nil, tooLarge(path, "%d bytes, more than the %d allowed", size, limit)
	}
	if size >= 0 {
		return readRegular(f, path, size)
	}
	return readCapped(f, path, limit, size)
}

// readRegular reads the regular file f of size bytes (its size when it
// was opened, within the limit) into one buffer of that size: a local file
// costs its size in memory once, never a second copy. A file that grew
// since is refused.
func readRegular(f *os.File, path string, size int64) ([]byte, error) {
	buf, ok := anonBuffer(size + 1)
	if !ok {
		buf = make([]byte, size+1)
	}
	n, err := io.ReadFull(f, buf)
	switch {
	case int64(n) > size:
		Release(buf)
		return nil, fmt.Errorf("%s: the file grew while it was read; read it again when nothing writes it", path)
	case err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF):
		Release(buf)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return buf[:n], nil
}

// mapped records the first byte of each mapping made (spool's of an
// unlinked file, readRegular's anonymous buffers), with its kind.
var mapped sync.Map

// Kinds of mappings in mapped.
const (
	fileMapping = "file" // an unlinked file's pages
	anonMapping = "anon" // private memory the bytes were read into
)

// Release unmaps b if Fetch mapped it (a body spooled to a file), when nothing refers to
// its bytes any more (a compact index.Builder keeps nothing of what it
// verified); b must not be used afterwards. Other slices are left to the
// garbage collector.
func Release(b []byte) {
	if len(b) > 0 {
		if _, ok := mapped.LoadAndDelete(&b[0]); ok {
			unmap(b)
		}
	}
}

// spoolMinSize is how much of a body of unknown size readCapped holds in
// memory before it moves it to a temporary file.
var spoolMinSize int64 = 64 << 20

// readCapped reads at most limit bytes from r; size is the announced
// length, or -1. Memory never grows past what was read: a body of known
// size is read into one buffer of that size, one of unknown size is read
// into memory up to spoolMinSize and beyond that copied to an unlinked
// temporary file (refused as soon as it passes limit) and mapped. An
// endless body therefore costs disk up to limit and little memory.
func readCapped(r io.Reader, loc string, limit, size int64) ([]byte, error) {
	if size > limit {
		return nil, tooLarge(loc, "%d bytes, more than the %d allowed", size, limit)
	}
	inMemory := min(limit+1, spoolMinSize)
	if size >= 0 && size < spoolMinSize {
		inMemory = size + 1 // one more byte shows a body longer than announced
	}
	buf, err := readUpTo(r, inMemory)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	if int64(len(buf)) > limit {
		return nil, tooLarge(loc, "more than the %d bytes allowed", limit)
	}
	if int64(len(buf)) < inMemory {
		return buf, nil
	}
	return spool(buf, r, loc, limit)
}

// readUpTo reads r until EOF or n bytes, growing its buffer by doubling but
// never beyond n.
func readUpTo(r io.Reader, n int64) ([]byte, error) {
	buf := make([]byte, 0, min(n, 512<<10))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(n, 2*int64(cap(buf))))
			copy(grown, buf)
			buf = grown
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// spool writes head and the rest of r to an unlinked temporary file,
// refusing more than limit bytes, and maps it (or reads it back where
// files are not mapped). Nothing else can open the file once it is
// unlinked, so nothing writes the mapped bytes (mapFile checks that it has
// no name).
func spool(head []byte, r io.Reader, loc string, limit int64) ([]byte, error) {
	f, err := os.CreateTemp("", "kbuild-fetch-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // the open file is all that is needed
	defer f.Close()
	if _, err := f.Write(head); err != nil {
		return nil, fmt.Errorf("%s: spool to a temporary file: %w", loc, err)
	}
	n, err := io.Copy(f, io.LimitReader(r, limit+1-int64(len(head))))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	total := int64(len(head)) + n
	if total > limit {
		return nil, tooLarge(loc, "more than the %d bytes allowed", limit)
	}
	if b, ok := mapFile(f, total); ok {
		return b, nil
	}
	b := make([]byte, total)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("%s: read back the temporary file: %w", loc, err)
	}
	return b, nil
}

// tooLarge is the refusal of a file over its limit: the site was read, and
// what it serves is not acceptable (an *index.VerificationError wrapping
// index.ErrTooLarge).
func tooLarge(loc, format string, args ...any) error {
	return &trust.VerificationError{What: loc, Err: trust.ErrTooLarge, Detail: fmt.Sprintf(format, args...)}
}

// Index returns the index file and its signature file, index.yaml.sig —
// the only one kubepkg reads; a missing signature file gives a nil
// signature (for Verify to refuse).
func (s *Site) Index(ctx context.Context) (indexBytes, sigBytes []byte, err error) {
	return s.IndexChecked(ctx, nil)
}

// Address space taken by reading an index (see addrspace.Cost), measured
// under a 1 GiB cap (bench/README.md) and rounded up.
var (
	// VerifyCost is what verifying an index that is not kept takes
	// (trust.VerifyOptions.DiscardIndex): its bytes once, a package at a
	// time parsed.
	VerifyCost = addrspace.Cost{PerByte: 1.25, Fixed: 32 << 20, Use: "verifying an index"}
	// MergeCost is what verifying an index and keeping it takes: a publish
	// over it (its versions in a compact index.Builder, the new index
	// written beside them), or a verification that goes on to its charts
	// or evidence.
	MergeCost = addrspace.Cost{PerByte: 4.5, Fixed: 96 << 20, Use: "publishing over an index (or verifying it with its charts or evidence)"}
)

// IndexChecked is Index that fetches index.yaml.sig first and, when
// precheck is not nil, gives it to precheck before the index is read: a
// missing, malformed or foreign signature (trust.PrecheckIndexSignature)
// is refused without the index in memory. A missing index still gives an
// error wrapping ErrNotFound, whatever precheck says.
//
// Under an address-space limit (ulimit -v) an index larger than fits at
// MergeCost is refused before it is read, with an error wrapping
// addrspace.ErrTooLarge that names the file and the limit; without a limit
// index.MaxIndexSize applies.
func (s *Site) IndexChecked(ctx context.Context, precheck func(sig []byte) error) (indexBytes, sigBytes []byte, err error) {
	return s.indexChecked(ctx, precheck, MergeCost)
}

// indexChecked is IndexChecked, the index to be read at cost.
func (s *Site) indexChecked(ctx context.Context, precheck func(sig []byte) error, cost addrspace.Cost) (indexBytes, sigBytes []byte, err error) {
	sigBytes, err = s.Fetch(ctx, s.index+".sig", index.MaxSignaturesSize)
	if errors.Is(err, ErrNotFound) {
		sigBytes, err = nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if precheck != nil {
		if perr := precheck(sigBytes); perr != nil {
			if err := s.exists(ctx, s.index); err != nil {
				return nil, nil, err
			}
			return nil, nil, perr
		}
	}
	limit, err := s.indexLimit(cost)
	if err != nil {
		return nil, nil, err
	}
	indexBytes, err = s.Fetch(ctx, s.index, limit)
	if errors.Is(err, trust.ErrTooLarge) && limit < index.MaxIndexSize {
		// More than fits was sent without a length, or the file grew.
		return nil, nil, fmt.Errorf("%s: %w", s.Location(s.index), &addrspace.Error{Size: -1, Cost: cost, Room: addrspace.Now()})
	}
	if err != nil {
		return nil, nil, err
	}
	return indexBytes, sigBytes, nil
}

// indexLimit returns how many bytes of the index may be read at cost:
// index.MaxIndexSize, or less under an address-space limit. A local index
// larger than fits is refused here, before it is read.
func (s *Site) indexLimit(cost addrspace.Cost) (int64, error) {
	room := addrspace.Now()
	limit := int64(index.MaxIndexSize)
	if m, ok := room.MaxSize(cost); ok && m < limit {
		limit = m
	}
	if s.remote {
		return limit, nil // Fetch refuses a Content-Length over limit before the body
	}
	loc := s.Location(s.index)
	fi, err := os.Stat(loc)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > index.MaxIndexSize {
		return limit, nil // ReadFile says what is wrong
	}
	if err := room.Check(fi.Size(), cost); err != nil {
		return 0, fmt.Errorf("%s: %w", loc, err)
	}
	return limit, nil
}

// exists returns nil when the site has the file name, an error wrapping
// ErrNotFound when it has not, and other errors as Fetch does; only the
// headers of a remote file are fetched.
func (s *Site) exists(ctx context.Context, name string) error {
	loc := s.Location(name)
	if !s.remote {
		_, err := os.Stat(loc)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", loc, ErrNotFound)
		}
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, loc, nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("HEAD %s: %w", loc, err)
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return fmt.Errorf("HEAD %s: %s: %w", loc, resp.Status, ErrNotFound)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("HEAD %s: %s", loc, resp.Status)
	}
	return nil
}

// ByHashSignature returns the other signature file of the index named by
// WithSignatureFor and its location, or nil when the site has none (or no
// name was given). data is the index, or nil to hash it as it streams
// from the site without holding it.
func (s *Site) ByHashSignature(ctx context.Context, data []byte) (sig []byte, loc string, err error) {
	if s.sigFor == nil {
		return nil, "", nil
	}
	var sum []byte
	if data != nil {
		h := sha256.Sum256(data)
		sum = h[:]
	} else if sum, err = s.hashIndex(ctx); err != nil {
		return nil, "", err
	}
	name := s.sigFor(hex.EncodeToString(sum))
	sig, err = s.Fetch(ctx, name, index.MaxSignaturesSize)
	if errors.Is(err, ErrNotFound) {
		return nil, s.Location(name), nil
	}
	return sig, s.Location(name), err
}

// hashIndex returns the sha256 of the index file as it streams, holding
// none of it (at most MaxIndexSize bytes are read).
func (s *Site) hashIndex(ctx context.Context) ([]byte, error) {
	loc := s.Location(s.index)
	var r io.ReadCloser
	if s.remote {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
		if err != nil {
			return nil, err
		}
		resp, err := s.client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", loc, err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("GET %s: %s", loc, resp.Status)
		}
		r = resp.Body
	} else {
		f, err := os.Open(loc)
		if err != nil {
			return nil, err
		}
		r = f
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(r, index.MaxIndexSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	if n > index.MaxIndexSize {
		return nil, tooLarge(loc, "more than the %d bytes allowed", int64(index.MaxIndexSize))
	}
	return h.Sum(nil), nil
}

// CheckByHash is the extra check of the signature by digest after v, the
// verification of data with index.yaml.sig, succeeded: when the site has
// one, it must sign data too. A refused one is a *trust.VerificationError
// naming the file.
func (s *Site) CheckByHash(ctx context.Context, data []byte, v *trust.Verified) error {
	sig, loc, err := s.ByHashSignature(ctx, data)
	if err != nil || sig == nil {
		return err
	}
	return v.CheckSignatureFile(data, sig, loc)
}

// Explain adds to err, a refusal of the index for its index.yaml.sig, that
// the site holds a signature of the index by digest, which kubepkg never
// reads. data is the index, or nil when it was refused before it was read.
func (s *Site) Explain(ctx context.Context, data []byte, err error) error {
	var ve *trust.VerificationError
	if !errors.As(err, &ve) || !errors.Is(err, trust.ErrNotSigned) {
		return err
	}
	sig, loc, ferr := s.ByHashSignature(ctx, data)
	if ferr != nil || sig == nil {
		return err
	}
	cp := *ve
	cp.Detail += fmt.Sprintf(" (%s, the signature a publish wrote for exactly these bytes, is present, but kubepkg never reads it: copy it over %s if it is good, or publish again)", loc, s.Location(s.index+".sig"))
	return &cp
}

// Roots fills trust.Latest with root.yaml and trust.Roots with root/1.yaml
// … root/N.yaml, N being root.yaml's version, for index.Verify. Versions
// up to first-1 are not fetched (a trusted root already covers them). The
// chain is walked version by version with index.RootChain: fetching stops
// at the first version that is missing or that the chain refuses, and the
// rest stay nil, so a site of a thousand junk roots costs one fetch, and
// index.Verify reports that first bad version.
func (s *Site) Roots(ctx context.Context, tr *trust.Trust, first int) error {
	latest, err := s.Fetch(ctx, sitelayout.RootFile, trust.MaxRootSize)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	tr.Latest = latest
	r, err := trust.ParseRoot(latest)
	if err != nil {
		return nil // Verify reports it
	}
	n := r.Signed.Version
	if n > MaxRootVersions {
		return &trust.VerificationError{What: s.Location(sitelayout.RootFile), Err: trust.ErrTooLarge, Detail: fmt.Sprintf("root version %d; at most %d versions are supported", n, MaxRootVersions)}
	}
	tr.Roots = make([][]byte, n)
	chain := trust.NewRootChain(tr, trust.VerifyOptions{})
	total := int64(len(latest))
	for v := max(first, 1); v <= n; v++ {
		name := fmt.Sprintf("root/%d.yaml", v)
		b, err := s.Fetch(ctx, name, min(trust.MaxRootSize, trust.MaxRootChainSize-total))
		var ve *trust.VerificationError
		if errors.As(err, &ve) && errors.Is(err, trust.ErrTooLarge) && total+trust.MaxRootSize > trust.MaxRootChainSize {
			return &trust.VerificationError{What: s.Location(name), Err: trust.ErrTooLarge, Detail: fmt.Sprintf("the root chain up to version %d (root.yaml and root/1.yaml … root/%d.yaml) is more than the %d bytes a reader accepts (MaxRootChainSize); a root of trust needs a few KiB a version", v, v, trust.MaxRootChainSize)}
		}
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		total += int64(len(b))
		tr.Roots[v-1] = b
		if v == chain.Next() {
			if chain.Add(b) != nil {
				return nil
			}
		}
	}
	return nil
}

// Verify fetches — when trust uses a root of trust — root.yaml and the
// root versions after the trusted ones, then index.yaml.sig and, when
// trust.PrecheckIndexSignature accepts it, the index, and verifies them
// with trust.Verify as kubepkg does: the signature is index.yaml.sig,
// whatever else the site holds. A signature by digest (WithSignatureFor)
// is then checked too when present, and named when index.yaml.sig is
// refused. A missing index gives an error wrapping ErrNotFound; a refusal
// is a *trust.VerificationError; anything else is a fetch error.
func (s *Site) Verify(ctx context.Context, tr *trust.Trust, opts trust.VerifyOptions) (*trust.Verified, error) {
	var err error
	switch {
	case tr.TrustedRoot != nil:
		err = s.Roots(ctx, tr, tr.TrustedRoot.Signed.Version)
	case len(tr.RootKeys) > 0:
		err = s.Roots(ctx, tr, 1)
	}
	if err != nil {
		return nil, err
	}
	cost := MergeCost
	if opts.DiscardIndex {
		cost = VerifyCost
	}
	data, sig, err := s.indexChecked(ctx, func(sig []byte) error { return trust.PrecheckIndexSignature(sig, tr, opts) }, cost)
	if err != nil {
		return nil, s.Explain(ctx, nil, err)
	}
	v, err := trust.Verify(data, sig, tr, opts)
	if err != nil {
		return nil, s.Explain(ctx, data, err)
	}
	if err := s.CheckByHash(ctx, data, v); err != nil {
		return nil, err
	}
	return v, nil
}
