package sources

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"
)

// withDictionary returns the xz file b with the LZMA2 dictionary of its
// first block set to code c and the block header's CRC32 fixed, as a
// hostile file would carry it.
func withDictionary(t testing.TB, b []byte, c byte) []byte {
	t.Helper()
	b = bytes.Clone(b)
	const start = 12 // after the stream header
	size := int(b[start]+1) * 4
	h := b[start : start+size]
	i := bytes.Index(h, []byte{0x21, 0x01}) // LZMA2, one byte of properties
	if i < 0 {
		t.Fatalf("no LZMA2 filter in the block header %x", h)
	}
	h[i+2] = c
	binary.LittleEndian.PutUint32(h[size-4:], crc32.ChecksumIEEE(h[:size-4]))
	return b
}

// TestXZDictionaryCap: an xz archive whose block asks for a 3 GiB
// dictionary (a file of a few hundred bytes) is refused as unsafe before a
// decoder allocates it; one of 64 MiB, what xz -9 uses, is extracted.
func TestXZDictionaryCap(t *testing.T) {
	small := xzipped(t, tarball(t, file("a", "1")))
	for _, tc := range []struct {
		name string
		code byte
		want string // "" extracts
	}{
		{"64 MiB (xz -9)", 28, ""},
		{"96 MiB", 29, "dictionary of 96 MiB"},
		{"3 GiB", 39, "dictionary of 3072 MiB"},
		{"4 GiB", 40, "dictionary of 4095 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := withDictionary(t, small, tc.code)
			dst := t.TempDir()
			err := extract(context.Background(), bytes.NewReader(data), int64(len(data)), dst, extractOptions{maxFile: 1 << 20, maxTotal: 1 << 21})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("extract(dictionary code %d) = %v, want success", tc.code, err)
				}
				return
			}
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("extract(dictionary code %d) = %v, want an ErrUnsafe naming the %q", tc.code, err, tc.want)
			}
			if left, _ := os.ReadDir(dst); len(left) != 0 {
				t.Errorf("a refused archive left %d entries", len(left))
			}
		})
	}
}

// TestXZContainersReal: what the xz CLI writes (several blocks, several
// streams with padding, every check type) passes the dictionary scan and
// extracts, so the scan walks the framing the decoder walks.
func TestXZContainersReal(t *testing.T) {
	if _, err := exec.LookPath("xz"); err != nil {
		if os.Getenv("KBUILD_E2E") != "" {
			t.Fatal("xz (xz-utils) is not installed")
		}
		t.Skip("xz (xz-utils) is not installed")
	}
	tarData := tarball(t, file("a", strings.Repeat("kbuild xz framing ", 20000)), file("b", "2"))
	compress := func(args ...string) []byte {
		cmd := exec.Command("xz", append([]string{"-c"}, args...)...)
		cmd.Stdin = bytes.NewReader(tarData)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("xz %v: %v", args, err)
		}
		return out
	}
	half := len(tarData) / 2
	twoStreams := func() []byte {
		var b bytes.Buffer
		for _, part := range [][]byte{tarData[:half], tarData[half:]} {
			cmd := exec.Command("xz", "-c", "--check=crc32")
			cmd.Stdin = bytes.NewReader(part)
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			b.Write(out)
			b.Write(make([]byte, 8)) // stream padding
		}
		return b.Bytes()
	}
	for name, data := range map[string][]byte{
		"default":           compress(),
		"-9 check none":     compress("-9", "--check=none"),
		"crc32 blocks 4KiB": compress("--check=crc32", "--block-size=4096"),
		"sha256 blocks":     compress("--check=sha256", "--block-size=10000"),
		"x86 filter":        compress("--x86", "--lzma2=preset=1"),
		"two streams":       twoStreams(),
	} {
		t.Run(name, func(t *testing.T) {
			if err := checkXZDictionaries(bytes.NewReader(data), int64(len(data)), MaxXZDictionary); err != nil {
				t.Fatalf("checkXZDictionaries(xz CLI output) = %v, want nil", err)
			}
			// The decoder agrees the stream is whole.
			r, err := xz.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Skipf("the decoder does not read this container either: %v", err)
			}
			got, err := io.ReadAll(r)
			if err != nil {
				t.Skipf("the decoder does not read this container either: %v", err)
			}
			if !bytes.Equal(got, tarData) {
				t.Fatal("decoded bytes differ")
			}
			dst := t.TempDir()
			if err := extract(context.Background(), bytes.NewReader(data), int64(len(data)), dst, extractOptions{maxFile: 1 << 20, maxTotal: 1 << 21}); err != nil {
				t.Fatalf("extract: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dst, "b")); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// FuzzXZDictionaries: the scan never panics, and a file it accepts never
// makes the decoder allocate a dictionary over the limit: decoding a
// little of it allocates at most the limit per block.
func FuzzXZDictionaries(f *testing.F) {
	small := xzipped(f, tarball(f, file("a", "1")))
	f.Add(small)
	f.Add(withDictionary(f, small, 39))
	f.Add(withDictionary(f, small, 40))
	f.Add(append(bytes.Clone(small), small...))
	const limit = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkXZDictionaries(bytes.NewReader(data), int64(len(data)), limit) != nil {
			return
		}
		blocks := bytes.Count(data, []byte{0x21, 0x01}) + 1
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if r, err := xz.NewReader(bytes.NewReader(data)); err == nil {
			io.Copy(io.Discard, io.LimitReader(r, 1<<20))
		}
		runtime.ReadMemStats(&after)
		if got, most := after.TotalAlloc-before.TotalAlloc, uint64(blocks)*(limit+8<<20); got > most {
			t.Fatalf("decoding an accepted file of %d bytes allocated %d bytes, more than %d", len(data), got, most)
		}
	})
}

// TestDeepArchive: an archive entry 2,000 directories deep is refused
// before anything is created (it took 19 s and printed a 4 KB path).
func TestDeepArchive(t *testing.T) {
	deep := strings.Repeat("a/", 2000) + "f" // 4001 bytes, under the name limit
	data := tarball(t, file(deep, "x"))
	dst := t.TempDir()
	err := extract(context.Background(), bytes.NewReader(data), int64(len(data)), dst, extractOptions{maxFile: 1 << 20, maxTotal: 1 << 21})
	if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "is 2001 directories deep, more than the 128") || len(err.Error()) > 400 {
		t.Fatalf("extract(entry 2,000 directories deep) = %v, want a short ErrUnsafe", err)
	}
	if left, _ := os.ReadDir(dst); len(left) != 0 {
		t.Errorf("a refused archive left %d entries", len(left))
	}
}
