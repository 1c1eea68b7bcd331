package sources

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"
)

func TestExtract(t *testing.T) {
	github, err := os.ReadFile("testdata/github-style.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	simple := []entry{dirEntry("pkg/"), file("pkg/a.txt", "A"), {name: "pkg/bin/run", body: "#!/bin/sh\n", mode: 0o755}}
	simpleTree := map[string]string{"pkg": "d", "pkg/a.txt": "f:A", "pkg/bin": "d", "pkg/bin/run": "x:#!/bin/sh\n"}
	for _, tc := range []struct {
		name    string
		archive []byte
		opts    extractOptions
		want    map[string]string
	}{
		{"tar", tarball(t, simple...), extractOptions{}, simpleTree},
		{"tar.gz", gzipped(t, tarball(t, simple...)), extractOptions{}, simpleTree},
		{"tar.xz", xzipped(t, tarball(t, simple...)), extractOptions{}, simpleTree},
		{"zip", zipball(t, simple...), extractOptions{}, simpleTree},
		{"strip 1", gzipped(t, tarball(t, simple...)), extractOptions{strip: 1},
			map[string]string{"a.txt": "f:A", "bin": "d", "bin/run": "x:#!/bin/sh\n"}},
		{"strip 2 skips shallow entries", tarball(t, simple...), extractOptions{strip: 2},
			map[string]string{"run": "x:#!/bin/sh\n"}},
		{"github archive with pax global header", github, extractOptions{strip: 1}, map[string]string{
			"README.md": "f:# demo\n", "run.sh": "x:#!/bin/sh\necho hi\n", "deploy": "d", "deploy/chart": "d",
			"deploy/chart/Chart.yaml": "f:apiVersion: v2\nname: demo\nversion: 1.0.0\n",
			"deploy/chart/templates":  "d", "deploy/chart/templates/cm.yaml": "f:kind: ConfigMap\n"}},
		{"pax global header built by Go", tarball(t, entry{name: "pax_global_header", typ: tar.TypeXGlobalHeader, body: "abc"}, file("x", "1")),
			extractOptions{}, map[string]string{"x": "f:1"}},
		{"dot-slash names", tarball(t, dirEntry("./"), file("./a", "1")), extractOptions{}, map[string]string{"a": "f:1"}},
		{"symlink inside is kept", tarball(t, file("a.txt", "A"), symlink("l", "a.txt"), dirEntry("d/"), symlink("d/up", "../a.txt")),
			extractOptions{}, map[string]string{"a.txt": "f:A", "l": "l:a.txt", "d": "d", "d/up": "l:../a.txt"}},
		{"zip symlink inside is kept", zipball(t, file("a.txt", "A"), symlink("l", "a.txt")),
			extractOptions{}, map[string]string{"a.txt": "f:A", "l": "l:a.txt"}},
		{"hard link inside becomes a copy", tarball(t, file("a", "A"), entry{name: "b", typ: tar.TypeLink, link: "a"}),
			extractOptions{}, map[string]string{"a": "f:A", "b": "f:A"}},
		{"hard link with strip", tarball(t, file("top/a", "A"), entry{name: "top/b", typ: tar.TypeLink, link: "top/a"}),
			extractOptions{strip: 1}, map[string]string{"a": "f:A", "b": "f:A"}},
		{"repeated directory entries", tarball(t, dirEntry("d/"), dirEntry("d/"), file("d/f", "1")),
			extractOptions{}, map[string]string{"d": "d", "d/f": "f:1"}},
		{"file exactly at the limits", tarball(t, file("a", "12345")), extractOptions{maxFile: 5, maxTotal: 5},
			map[string]string{"a": "f:12345"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := t.TempDir()
			o := tc.opts
			if o.maxFile == 0 {
				o.maxFile, o.maxTotal = 1<<20, 1<<20
			}
			if err := extract(context.Background(), bytes.NewReader(tc.archive), int64(len(tc.archive)), dst, o); err != nil {
				t.Fatalf("extract: %v", err)
			}
			sameTree(t, tree(t, dst), tc.want)
		})
	}
}

// zeros returns n zero bytes: highly compressible bomb material.
func zeros(n int) string { return string(make([]byte, n)) }

// lyingZip builds a zip whose only entry declares size 10 but inflates to
// n bytes.
func lyingZip(t testing.TB, n int) []byte {
	t.Helper()
	var deflated bytes.Buffer
	fw, _ := flate.NewWriter(&deflated, flate.BestCompression)
	fw.Write(make([]byte, n))
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "bomb", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(make([]byte, n)),
		CompressedSize64: uint64(deflated.Len()), UncompressedSize64: 10})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(deflated.Bytes())
	zw.Close()
	return buf.Bytes()
}

// hostileArchives are archives extract must refuse, with what the error
// must say. They are shared by TestExtractHostile and the url source
// tests (which check that nothing stays cached).
func hostileArchives(t testing.TB) []struct {
	name    string
	archive []byte
	opts    extractOptions
	target  error
	msg     string
} {
	limits := extractOptions{maxFile: 1 << 20, maxTotal: 2 << 20}
	chart := limits
	chart.noSymlinks = true
	type tc = struct {
		name    string
		archive []byte
		opts    extractOptions
		target  error
		msg     string
	}
	return []tc{
		{"absolute path", tarball(t, file("/etc/passwd", "x")), limits, ErrUnsafe, `"/etc/passwd" has an absolute`},
		{"dot-dot", tarball(t, file("../evil", "x")), limits, ErrUnsafe, `"../evil" leaves the extraction directory`},
		{"dot-dot inside", tarball(t, file("a/../../evil", "x")), limits, ErrUnsafe, "leaves the extraction directory"},
		{"zip absolute path", zipball(t, file("/abs", "x")), limits, ErrUnsafe, "absolute"},
		{"zip dot-dot", zipball(t, file("../../evil", "x")), limits, ErrUnsafe, "leaves the extraction directory"},
		{"symlink absolute", tarball(t, symlink("l", "/etc")), limits, ErrUnsafe, `symlink to "/etc", outside`},
		{"symlink up and out", tarball(t, dirEntry("d/"), symlink("d/l", "../../x")), limits, ErrUnsafe, "outside the extraction directory"},
		{"zip symlink out", zipball(t, symlink("l", "../x")), limits, ErrUnsafe, "outside"},
		{"symlink chain out", tarball(t, dirEntry("t/"), dirEntry("x/y/"), symlink("x/y/s", "../../t"), symlink("x/y/p", "s/../../..")),
			limits, ErrUnsafe, "resolves to"},
		{"dangling symlink", tarball(t, symlink("l", "missing")), limits, ErrUnsafe, "does not resolve"},
		{"write through symlink", tarball(t, dirEntry("d/"), symlink("l", "d"), file("l/f", "x")), limits, ErrUnsafe, `lies below "l"`},
		{"hard link out", tarball(t, entry{name: "h", typ: tar.TypeLink, link: "../../etc/passwd"}), limits, ErrUnsafe, "hard link"},
		{"hard link absolute", tarball(t, entry{name: "h", typ: tar.TypeLink, link: "/etc/passwd"}), limits, ErrUnsafe, "hard link"},
		{"hard link to missing", tarball(t, entry{name: "h", typ: tar.TypeLink, link: "nope"}), limits, ErrUnsafe, "not a regular file extracted before it"},
		{"hard link to symlink", tarball(t, file("a", "1"), symlink("s", "a"), entry{name: "h", typ: tar.TypeLink, link: "s"}), limits, ErrUnsafe, "not a regular file"},
		{"char device", tarball(t, entry{name: "null", typ: tar.TypeChar}), limits, ErrUnsafe, "device"},
		{"block device", tarball(t, entry{name: "sda", typ: tar.TypeBlock}), limits, ErrUnsafe, "device"},
		{"fifo", tarball(t, entry{name: "p", typ: tar.TypeFifo}), limits, ErrUnsafe, "FIFO"},
		{"zip device", zipball(t, entry{name: "null", typ: tar.TypeChar}), limits, ErrUnsafe, "device"},
		{"duplicate names", tarball(t, file("a", "1"), file("a", "2")), limits, ErrUnsafe, "more than once"},
		{"duplicate after strip", tarball(t, file("x/a", "1"), file("y/a", "2")), extractOptions{strip: 1, maxFile: 1 << 20, maxTotal: 1 << 20}, ErrUnsafe, "more than once"},
		{"zip duplicate names", zipball(t, file("a", "1"), file("a", "2")), limits, ErrUnsafe, "more than once"},
		{"file over directory", tarball(t, dirEntry("a/"), file("a", "1")), limits, ErrUnsafe, "more than once"},
		{"gzip bomb one file", gzipped(t, tarball(t, file("bomb", zeros(8<<20)))), limits, ErrTooLarge, "per-file limit"},
		{"gzip bomb many files", gzipped(t, tarball(t, file("a", zeros(900<<10)), file("b", zeros(900<<10)), file("c", zeros(900<<10)))),
			limits, ErrTooLarge, "total limit"},
		{"xz bomb", xzipped(t, tarball(t, file("bomb", zeros(8<<20)))), limits, ErrTooLarge, "limit"},
		{"zip bomb", zipball(t, file("bomb", zeros(8<<20))), limits, ErrTooLarge, "per-file limit"},
		{"zip bomb lying about its size", lyingZip(t, 8<<20), limits, nil, "bomb"},
		{"symlink in chart", gzipped(t, tarball(t, file("c/Chart.yaml", "name: c"), symlink("c/l", "Chart.yaml"))), chart, ErrUnsafe, "may not contain symlinks"},
		{"not an archive", []byte("<html>not found</html>"), limits, nil, "tar"},
		{"empty tar", tarball(t), limits, nil, "no entries"},
		{"truncated gzip", gzipped(t, tarball(t, file("a", strings.Repeat("x", 5000))))[:30], limits, nil, "unexpected EOF"},
	}
}

func TestExtractHostile(t *testing.T) {
	for _, tc := range hostileArchives(t) {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dst := filepath.Join(parent, "out")
			os.Mkdir(dst, 0o755)
			err := extract(context.Background(), bytes.NewReader(tc.archive), int64(len(tc.archive)), dst, tc.opts)
			wantErr(t, err, tc.target, tc.msg)
			// Nothing may have been written outside dst.
			entries, _ := os.ReadDir(parent)
			if len(entries) != 1 {
				t.Errorf("extract wrote outside its directory: %v", entries)
			}
		})
	}
}

// FuzzExtract feeds arbitrary bytes to extract: it must never panic, never
// write outside its directory and never exceed its limits.
func FuzzExtract(f *testing.F) {
	f.Add(tarball(f, file("a", "1"), dirEntry("d/"), symlink("d/l", "../a")), 0)
	f.Add(gzipped(f, tarball(f, file("x/a", "1"), entry{name: "x/b", typ: tar.TypeLink, link: "x/a"})), 1)
	f.Add(zipball(f, file("a", "1"), symlink("l", "a")), 0)
	f.Add(xzipped(f, tarball(f, file("a", "1"))), 0)
	f.Add(tarball(f, entry{name: "pax_global_header", typ: tar.TypeXGlobalHeader, body: "c"}, file("r/a", "1")), 1)
	f.Add(tarball(f, symlink("l", "../x")), 0)
	f.Fuzz(func(t *testing.T, data []byte, strip int) {
		if strip < 0 || strip > 3 {
			strip = 0
		}
		parent := t.TempDir()
		dst := filepath.Join(parent, "out")
		os.Mkdir(dst, 0o755)
		const limit = 1 << 16
		err := extract(context.Background(), bytes.NewReader(data), int64(len(data)), dst, extractOptions{strip: strip, maxFile: limit, maxTotal: 2 * limit})
		if entries, _ := os.ReadDir(parent); len(entries) != 1 {
			t.Fatalf("extract wrote outside its directory: %v", entries)
		}
		if err != nil {
			return
		}
		root, _ := filepath.EvalSymlinks(dst)
		var total int64
		filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode()&os.ModeSymlink != 0 {
				if err := checkInside(root, p); err != nil {
					t.Fatalf("symlink %s: %v", p, err)
				}
			} else if !fi.IsDir() && !fi.Mode().IsRegular() {
				t.Fatalf("%s is neither file, directory nor symlink", p)
			}
			total += fi.Size() * boolInt(fi.Mode().IsRegular())
			return nil
		})
		if total > 2*limit {
			t.Fatalf("extracted %d bytes, more than the limit", total)
		}
		if _, err := HashDir(root); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("HashDir: %v", err)
		}
	})
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// cancelAfter cancels a context once n bytes have been read through it.
type cancelAfter struct {
	r      io.ReaderAt
	n      int64
	cancel context.CancelFunc
}

func (c *cancelAfter) ReadAt(p []byte, off int64) (int, error) {
	if off > c.n {
		c.cancel()
	}
	return c.r.ReadAt(p, off)
}

// TestExtractStopsOnContext: extraction of a large archive stops when the
// context is cancelled (SIGINT, SIGTERM) and what was written is removed;
// the archive stays cached (it is not at fault).
func TestExtractStopsOnContext(t *testing.T) {
	var entries []entry
	for i := 0; i < 2000; i++ {
		entries = append(entries, file(fmt.Sprintf("d/f%04d", i), strings.Repeat("x", 512)))
	}
	archive := tarball(t, entries...)
	f := newFetcher(t)
	digest, blob := cached(t, f, archive)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := t.TempDir()
	x := &cancelAfter{r: blob, n: int64(len(archive) / 2), cancel: cancel}
	fi, _ := blob.Stat()
	err := extract(ctx, x, fi.Size(), out, extractOptions{maxTotal: 1 << 30, maxFile: 1 << 30})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("extract with a cancelled context = %v, want context.Canceled", err)
	}
	// Through extractBlob, what was written is removed.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if err := f.extractBlob(ctx2, blob, digest, out, extractOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("extractBlob(cancelled) = %v, want context.Canceled", err)
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("extractBlob left %d entries after cancellation", len(left))
	}
	if !f.cache.has(digest) {
		t.Error("a cancelled extraction removed the archive from the cache")
	}
}

// TestExtractBombAndLongNames: an archive that expands more than 100 times
// (past the first 64 MiB) is refused as a compression bomb before it is
// written out in full, and entry names in errors are cut short.
func TestExtractBombAndLongNames(t *testing.T) {
	bomb := gzipped(t, tarball(t, file("zeros", zeros(80<<20))))
	err := extract(context.Background(), bytes.NewReader(bomb), int64(len(bomb)), t.TempDir(), extractOptions{maxTotal: 1 << 30, maxFile: 1 << 30})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "times its size") {
		t.Fatalf("extract(gzip bomb of %d bytes) = %v, want a compression-bomb refusal", len(bomb), err)
	}
	long := strings.Repeat("n", 100_000)
	archive := tarball(t, file(long, "x"), file(long, "y"))
	err = extract(context.Background(), bytes.NewReader(archive), int64(len(archive)), t.TempDir(), extractOptions{maxTotal: 1 << 20, maxFile: 1 << 20})
	if !errors.Is(err, ErrUnsafe) || len(err.Error()) > 400 || !strings.Contains(err.Error(), "(100000 bytes)") {
		t.Fatalf("extract(100 KB entry name) = %q (%d bytes), want a short ErrUnsafe naming the length", err, len(err.Error()))
	}
}

// TestExtractEntryLimit: an archive with more entries than maxEntries is
// refused before anything is written — tar archives by a first pass that
// counts headers, zip archives by their central directory — and an
// archive of exactly maxEntries entries is extracted.
func TestExtractEntryLimit(t *testing.T) {
	defer func(n int) { maxEntries = n }(maxEntries)
	maxEntries = 100
	entries := func(n int) []entry {
		var out []entry
		for i := 0; i < n; i++ {
			out = append(out, file(fmt.Sprintf("d%d/f%d", i%7, i), ""))
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		archive func(...entry) []byte
	}{
		{"tar", func(e ...entry) []byte { return tarball(t, e...) }},
		{"tar.gz", func(e ...entry) []byte { return gzipped(t, tarball(t, e...)) }},
		{"zip", func(e ...entry) []byte { return zipball(t, e...) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			archive := tc.archive(entries(1000)...)
			dst := t.TempDir()
			err := extract(context.Background(), bytes.NewReader(archive), int64(len(archive)), dst, extractOptions{maxTotal: 1 << 20, maxFile: 1 << 20})
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 100 entries") {
				t.Fatalf("extract(1000 entries, limit 100) = %v, want ErrTooLarge", err)
			}
			if got, _ := os.ReadDir(dst); len(got) != 0 {
				t.Errorf("extract wrote %d entries before refusing, want none", len(got))
			}
			archive = tc.archive(entries(100)...)
			if err := extract(context.Background(), bytes.NewReader(archive), int64(len(archive)), t.TempDir(), extractOptions{maxTotal: 1 << 20, maxFile: 1 << 20}); err != nil {
				t.Fatalf("extract(100 entries, limit 100) = %v, want it extracted", err)
			}
		})
	}
}

// TestExtractXZBomb: a .tar.xz of a few kilobytes whose one entry is 80 MiB
// of zeros passes the 64 MiB allowance and 100 times its size; it is refused
// as a compression bomb, the extraction directory is left empty and the
// archive leaves the cache (it is at fault). The archive is built by
// streaming the zeros through the xz writer, not by holding them.
func TestExtractXZBomb(t *testing.T) {
	const size = 80 << 20
	var buf bytes.Buffer
	zw, err := xz.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "zeros", Typeflag: tar.TypeReg, Mode: 0o644, Size: size, Format: tar.FormatPAX}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(tw, zeroReader{}, size); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	bomb := buf.Bytes()
	if len(bomb)*maxRatio > ratioFree {
		t.Fatalf("the xz bomb is %d bytes; it must be under %d to test the ratio limit", len(bomb), ratioFree/maxRatio)
	}
	f := newFetcher(t)
	digest, blob := cached(t, f, bomb)
	out := t.TempDir()
	err = f.extractBlob(context.Background(), blob, digest, out, extractOptions{})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "times its size (a compression bomb?)") || !strings.Contains(err.Error(), `"zeros"`) {
		t.Fatalf("extract(xz bomb of %d bytes) = %v, want a compression-bomb refusal naming the entry", len(bomb), err)
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("a refused xz bomb left %d entries in the extraction directory", len(left))
	}
	if f.cache.has(digest) {
		t.Error("a refused xz bomb stayed in the cache")
	}
}

// zeroReader reads endless zeros.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
