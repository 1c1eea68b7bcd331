package sources

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ulikunitz/xz"
)

// maxEntries bounds the number of entries one archive may hold, so that an
// archive of empty files can exhaust neither inodes nor time: writing a
// file costs about 90 µs here, and 200,000 of them (twice the Linux
// kernel's tree) about 18 s. A variable for tests.
var maxEntries = 200_000

// An archive may expand to maxRatio times its size, and to ratioFree bytes
// whatever its size: beyond that it is a compression bomb, refused before
// gigabytes of zeros are decompressed and written. Real source archives
// expand 3 to 15 times.
const (
	maxRatio  = 100
	ratioFree = 64 << 20
)

// maxEntryName bounds the length of an entry name (Linux's PATH_MAX).
const maxEntryName = 4096

// maxDepth bounds how deep an entry may lie: real source trees nest a few
// dozen directories; thousands make every later path long and slow to
// resolve.
const maxDepth = 128

// maxLinkTarget bounds the length of a symlink target read from a zip body.
const maxLinkTarget = 4096

// extractOptions limit and shape an extraction.
type extractOptions struct {
	// strip removes this many leading directories from every entry name;
	// entries with no more components than that are skipped.
	strip int
	// maxTotal bounds the bytes written for all files, maxFile for one.
	maxTotal, maxFile int64
	// noSymlinks rejects symlinks (chart archives).
	noSymlinks bool
}

// extract unpacks the archive in r (tar, tar.gz, tar.xz or zip, told apart
// by their first bytes) into dst, an existing empty directory.
//
// Every entry is checked before anything is written for it: names must be
// relative and stay inside dst; devices, FIFOs and unknown entry types are
// refused; a name may appear once (directories excepted); no entry may be
// written below a file or symlink; hard links must name a regular file
// extracted before them and are written as copies. Symlinks are kept when
// their target stays inside dst: they are created after every other entry
// and each must then resolve (through any other links) to an existing path
// inside dst. Files get mode 0644, or 0755 when any execute bit is set;
// ownership and times are not restored.
//
// Extraction stops, with an error wrapping ctx.Err(), at the next entry or
// read once ctx is done (SIGINT, SIGTERM); the caller removes what was
// written.
func extract(ctx context.Context, r io.ReaderAt, size int64, dst string, o extractOptions) error {
	root, err := filepath.EvalSymlinks(dst)
	if err != nil {
		return fmt.Errorf("extract: %w", err)
	}
	x := &extractor{ctx: ctx, root: root, o: o, size: size, seen: map[string]entryKind{}}
	r = ctxReaderAt{ctx, r}
	magic := make([]byte, 6)
	n, _ := r.ReadAt(magic, 0)
	magic = magic[:n]
	switch {
	case bytes.HasPrefix(magic, []byte("PK\x03\x04")), bytes.HasPrefix(magic, []byte("PK\x05\x06")):
		err = x.zip(r, size)
	default:
		err = x.tarStream(r, size, magic)
	}
	if err == nil {
		err = x.finish()
	}
	return err
}

// tarStream extracts a tar archive, compressed with gzip or xz (told by
// magic) or not. The entries are counted first, writing nothing, so that
// an archive of more than maxEntries is refused before one file is
// created: writing 200,000 empty files costs more than reading 600,000
// headers twice.
func (x *extractor) tarStream(r io.ReaderAt, size int64, magic []byte) error {
	if bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0}) {
		if err := checkXZDictionaries(r, size, MaxXZDictionary); err != nil {
			return fmt.Errorf("read archive: %w", err)
		}
	}
	open := func() (io.Reader, error) {
		sr := io.NewSectionReader(r, 0, size)
		switch {
		case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
			return gzip.NewReader(sr)
		case bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
			// checkXZDictionaries bounded the dictionaries the block
			// headers ask for; the output is bounded by maxTotal and the
			// count's read limit.
			return xz.NewReader(sr)
		}
		return sr, nil
	}
	tr, err := open()
	if err != nil {
		return fmt.Errorf("read archive: %w", err)
	}
	if err := x.countTar(tr); err != nil {
		return err
	}
	if tr, err = open(); err != nil {
		return fmt.Errorf("read archive: %w", err)
	}
	return x.tar(tr)
}

// countTar refuses a tar stream of more than maxEntries entries. It reads
// no more of the stream than the archive may expand to (the bomb limit,
// plus a header's worth per entry); a stream it cannot read to the end
// within that is left to the extraction, which refuses it by size.
func (x *extractor) countTar(r io.Reader) error {
	limit := max(ratioFree, maxRatio*x.size) + int64(maxEntries+1)*1024
	tr := tar.NewReader(ctxReader{x.ctx, io.LimitReader(r, limit)})
	for n := 0; ; n++ {
		if n > maxEntries {
			return fmt.Errorf("archive has more than %d entries: %w", maxEntries, ErrTooLarge)
		}
		if _, err := tr.Next(); err != nil {
			if err := x.ctx.Err(); err != nil {
				return fmt.Errorf("extraction stopped: %w", err)
			}
			return nil // the end, or an error the extraction reports
		}
	}
}

// ExtractArchive unpacks the archive of size bytes in r (tar, tar.gz,
// tar.xz or zip) into dst, an existing empty directory, with the checks
// every source archive gets: names must be relative and stay inside dst
// (no absolute paths, no ".."), nothing is written below a symlink or a
// file, symlinks must resolve inside dst, devices and FIFOs are refused
// (errors wrap ErrUnsafe), and at most maxTotal bytes in all and maxFile
// for one file are written (ErrTooLarge). On error the caller removes
// what was written under dst.
func ExtractArchive(ctx context.Context, r io.ReaderAt, size int64, dst string, maxTotal, maxFile int64) error {
	if maxTotal <= 0 || maxFile <= 0 {
		return fmt.Errorf("extract %s: size limits must be positive, got total %d, file %d", dst, maxTotal, maxFile)
	}
	return extract(ctx, r, size, dst, extractOptions{maxTotal: maxTotal, maxFile: maxFile})
}

type entryKind int

const (
	kindDir entryKind = iota + 1
	kindFile
	kindSymlink
)

type extractor struct {
	ctx   context.Context
	size  int64 // of the archive
	root  string
	o     extractOptions
	total int64
	count int
	seen  map[string]entryKind
	links [][2]string // symlink name, target; created by finish
}

func (x *extractor) tar(r io.Reader) error {
	tr := tar.NewReader(r)
	for {
		if err := x.ctx.Err(); err != nil {
			return fmt.Errorf("extraction stopped: %w", err)
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			return fmt.Errorf("read tar archive: %w", err)
		}
		switch hdr.Typeflag {
		case tar.TypeXGlobalHeader:
			// pax global header, as GitHub archives begin with: metadata only.
			continue
		case tar.TypeDir:
			err = x.dir(hdr.Name)
		case tar.TypeReg:
			err = x.file(hdr.Name, hdr.FileInfo().Mode(), hdr.Size, tr)
		case tar.TypeSymlink:
			err = x.symlink(hdr.Name, hdr.Linkname)
		case tar.TypeLink:
			err = x.hardlink(hdr.Name, hdr.Linkname)
		case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
			err = fmt.Errorf("entry %s is a device or FIFO: %w", quoteName(hdr.Name), ErrUnsafe)
		default:
			err = fmt.Errorf("entry %s has unsupported tar type %q: %w", quoteName(hdr.Name), hdr.Typeflag, ErrUnsafe)
		}
		if err != nil {
			return err
		}
	}
}

func (x *extractor) zip(r io.ReaderAt, size int64) error {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return fmt.Errorf("read zip archive: %w", err)
	}
	if len(zr.File) > maxEntries {
		return fmt.Errorf("archive has more than %d entries: %w", maxEntries, ErrTooLarge)
	}
	for _, f := range zr.File {
		if err := x.ctx.Err(); err != nil {
			return fmt.Errorf("extraction stopped: %w", err)
		}
		mode := f.Mode()
		switch {
		case mode.IsDir() || strings.HasSuffix(f.Name, "/"):
			err = x.dir(f.Name)
		case mode&fs.ModeSymlink != 0:
			err = x.zipSymlink(f)
		case mode.Type() != 0:
			err = fmt.Errorf("entry %s is a device, FIFO or socket: %w", quoteName(f.Name), ErrUnsafe)
		default:
			if f.UncompressedSize64 > uint64(x.o.maxFile) {
				return x.tooLarge(f.Name, x.o.maxFile, "per-file")
			}
			var rc io.ReadCloser
			if rc, err = f.Open(); err != nil {
				return fmt.Errorf("entry %s: %w", quoteName(f.Name), err)
			}
			err = x.file(f.Name, mode, int64(f.UncompressedSize64), rc)
			rc.Close()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (x *extractor) zipSymlink(f *zip.File) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("entry %s: %w", quoteName(f.Name), err)
	}
	defer rc.Close()
	target, err := io.ReadAll(io.LimitReader(rc, maxLinkTarget+1))
	if err != nil {
		return fmt.Errorf("entry %s: %w", quoteName(f.Name), err)
	}
	if len(target) > maxLinkTarget {
		return fmt.Errorf("entry %s: symlink target longer than %d bytes: %w", quoteName(f.Name), maxLinkTarget, ErrUnsafe)
	}
	return x.symlink(f.Name, string(target))
}

// cleanName checks an archive entry name and returns it relative to the
// extraction root after removing strip leading directories, or "" when
// nothing is left.
func cleanName(name string, strip int) (string, error) {
	if len(name) > maxEntryName {
		return "", fmt.Errorf("entry %s: a name longer than %d bytes: %w", quoteName(name), maxEntryName, ErrUnsafe)
	}
	if strings.HasPrefix(name, "/") || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("entry %s has an absolute or invalid path: %w", quoteName(name), ErrUnsafe)
	}
	var parts []string
	for _, p := range strings.Split(name, "/") {
		switch p {
		case "", ".":
		case "..":
			return "", fmt.Errorf("entry %s leaves the extraction directory (..): %w", quoteName(name), ErrUnsafe)
		default:
			parts = append(parts, p)
		}
	}
	if len(parts) > maxDepth {
		return "", fmt.Errorf("entry %s is %d directories deep, more than the %d an archive may nest: %w", quoteName(name), len(parts), maxDepth, ErrUnsafe)
	}
	if len(parts) <= strip {
		return "", nil
	}
	return strings.Join(parts[strip:], "/"), nil
}

// name checks an entry and records it; it returns the entry's path
// relative to the root, or "" when stripping leaves nothing.
func (x *extractor) name(name string, kind entryKind) (string, error) {
	x.count++
	if x.count > maxEntries {
		return "", fmt.Errorf("archive has more than %d entries: %w", maxEntries, ErrTooLarge)
	}
	rel, err := cleanName(name, x.o.strip)
	if err != nil || rel == "" {
		return "", err
	}
	if prev, dup := x.seen[rel]; dup && (prev != kindDir || kind != kindDir) {
		return "", fmt.Errorf("entry %s appears more than once in the archive: %w", quoteName(name), ErrUnsafe)
	}
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		if k, ok := x.seen[dir]; ok && k != kindDir {
			return "", fmt.Errorf("entry %s lies below %s, which is not a directory: %w", quoteName(name), quoteName(dir), ErrUnsafe)
		}
	}
	x.seen[rel] = kind
	return rel, nil
}

func (x *extractor) dir(name string) error {
	rel, err := x.name(name, kindDir)
	if err != nil || rel == "" {
		return err
	}
	return os.MkdirAll(filepath.Join(x.root, filepath.FromSlash(rel)), 0o755)
}

func (x *extractor) file(name string, mode fs.FileMode, size int64, body io.Reader) error {
	rel, err := x.name(name, kindFile)
	if err != nil || rel == "" {
		return err
	}
	if size > x.o.maxFile {
		return x.tooLarge(name, x.o.maxFile, "per-file")
	}
	return x.write(name, rel, mode, body)
}

func (x *extractor) write(name, rel string, mode fs.FileMode, body io.Reader) error {
	p := filepath.Join(x.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("entry %s: %w", quoteName(name), err)
	}
	perm := fs.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("entry %s: %w", quoteName(name), err)
	}
	limit, which := x.o.maxFile, "per-file"
	if left := x.o.maxTotal - x.total; left < limit {
		limit, which = left, "total"
	}
	if left := max(ratioFree, maxRatio*x.size) - x.total; left < limit {
		limit, which = left, "ratio"
	}
	n, err := io.Copy(out, &limitReader{r: body, n: limit})
	x.total += n
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, ErrTooLarge) {
		return x.tooLarge(name, limit, which)
	}
	if err != nil {
		return fmt.Errorf("entry %s: %w", quoteName(name), err)
	}
	return nil
}

func (x *extractor) tooLarge(name string, limit int64, which string) error {
	if which == "ratio" {
		return fmt.Errorf("entry %s: an archive of %d bytes expands to more than %d times its size (a compression bomb?): %w", quoteName(name), x.size, maxRatio, ErrTooLarge)
	}
	if which == "total" {
		return fmt.Errorf("entry %s: archive expands past the %s limit of %d bytes: %w", quoteName(name), which, x.o.maxTotal, ErrTooLarge)
	}
	return fmt.Errorf("entry %s: file is larger than the %s limit of %d bytes: %w", quoteName(name), which, limit, ErrTooLarge)
}

func (x *extractor) symlink(name, target string) error {
	if x.o.noSymlinks {
		return fmt.Errorf("entry %s is a symlink; chart archives may not contain symlinks: %w", quoteName(name), ErrUnsafe)
	}
	rel, err := x.name(name, kindSymlink)
	if err != nil || rel == "" {
		return err
	}
	if target == "" || path.IsAbs(target) || !filepath.IsLocal(path.Join(path.Dir(rel), target)) {
		return fmt.Errorf("entry %s is a symlink to %s, outside the extraction directory: %w", quoteName(name), quoteName(target), ErrUnsafe)
	}
	x.links = append(x.links, [2]string{rel, target})
	return nil
}

func (x *extractor) hardlink(name, target string) error {
	// A hard link names its target by archive path; strip it alike.
	trel, err := cleanName(target, x.o.strip)
	if err != nil || trel == "" || x.seen[trel] != kindFile {
		return fmt.Errorf("entry %s is a hard link to %s, which is not a regular file extracted before it: %w", quoteName(name), quoteName(target), ErrUnsafe)
	}
	rel, err := x.name(name, kindFile)
	if err != nil || rel == "" {
		return err
	}
	src, err := os.Open(filepath.Join(x.root, filepath.FromSlash(trel)))
	if err != nil {
		return fmt.Errorf("entry %s: %w", quoteName(name), err)
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return fmt.Errorf("entry %s: %w", quoteName(name), err)
	}
	return x.write(name, rel, fi.Mode(), src)
}

// finish creates the symlinks and checks that each resolves inside root.
func (x *extractor) finish() error {
	if len(x.seen) == 0 {
		return fmt.Errorf("archive has no entries (after strip %d)", x.o.strip)
	}
	for _, l := range x.links {
		p := filepath.Join(x.root, filepath.FromSlash(l[0]))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("entry %s: %w", quoteName(l[0]), err)
		}
		if err := os.Symlink(l[1], p); err != nil {
			return fmt.Errorf("entry %s: %w", quoteName(l[0]), err)
		}
	}
	for _, l := range x.links {
		p := filepath.Join(x.root, filepath.FromSlash(l[0]))
		if err := checkInside(x.root, p); err != nil {
			return fmt.Errorf("entry %s is a symlink to %s: %w", quoteName(l[0]), quoteName(l[1]), err)
		}
	}
	return nil
}

// checkInside resolves p through every symlink and checks that the result
// exists and lies inside root (which must itself be resolved).
func checkInside(root, p string) error {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Errorf("does not resolve to a path inside %s: %w", root, ErrUnsafe)
	}
	if !within(root, real) {
		return fmt.Errorf("resolves to %s, outside %s: %w", real, root, ErrUnsafe)
	}
	return nil
}

// within reports whether p is root or below it; both must be clean.
func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}
