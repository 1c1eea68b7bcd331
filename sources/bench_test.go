package sources

import (
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkHash measures the streaming sha256 the cache uses, on the file
// named by $KBUILD_BENCH_FILE (bench/hash/run.sh makes a 512 MiB one) or
// on a generated 64 MiB file: "hash" only reads and hashes, "put" also
// copies into a cache as downloads do.
func BenchmarkHash(b *testing.B) {
	path := os.Getenv("KBUILD_BENCH_FILE")
	if path == "" {
		path = filepath.Join(b.TempDir(), "data")
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		io.CopyN(f, rand.Reader, 64<<20)
		f.Close()
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("hash", func(b *testing.B) {
		b.SetBytes(fi.Size())
		for b.Loop() {
			f, _ := os.Open(path)
			if _, _, err := hashReader(f); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	b.Run("put", func(b *testing.B) {
		c := &cache{dir: b.TempDir(), logf: func(string, ...any) {}}
		b.SetBytes(fi.Size())
		for b.Loop() {
			f, _ := os.Open(path)
			d, err := c.put(f, -1, nil)
			if err != nil {
				b.Fatal(err)
			}
			f.Close()
			os.Remove(c.blobPath(d))
		}
	})
}
