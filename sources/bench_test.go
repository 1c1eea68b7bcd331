package sources

import (
	"bytes"
	"crypto/rand"
	"fmt"
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

// chartIndexOf writes a helm-style index.yaml with charts names, two
// versions each, the wanted chart "wanted" last.
func chartIndexOf(charts int) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: v1\nentries:\n")
	for i := 0; i < charts; i++ {
		name := fmt.Sprintf("chart-%07d", i)
		if i == charts-1 {
			name = "wanted"
		}
		for v := 1; v <= 2; v++ {
			if v == 1 {
				fmt.Fprintf(&b, "  %s:\n", name)
			}
			fmt.Fprintf(&b, "  - apiVersion: v2\n    name: %s\n    version: 1.0.%d\n    digest: %064d\n    urls:\n    - charts/%s-1.0.%d.tgz\n", name, v, i, name, v)
		}
	}
	b.WriteString("generated: \"2026-01-01T00:00:00Z\"\n")
	return b.Bytes()
}

// BenchmarkLookupChart reads chart indexes of 1k to 200k chart names (the
// 200k one is about 46 MB), in helm's block layout (streamed) and as JSON
// (parsed whole), looking up the last chart. Both must grow linearly.
func BenchmarkLookupChart(b *testing.B) {
	for _, n := range []int{1_000, 20_000, 200_000} {
		data := chartIndexOf(n)
		for layout, doc := range map[string][]byte{"block": data, "flow": nil} {
			if layout == "flow" {
				if n > 20_000 {
					continue // the full parse holds the node tree: measured up to 20k
				}
				doc = toFlow(b, data)
			}
			b.Run(fmt.Sprintf("%s/%d", layout, n), func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				for b.Loop() {
					v, _, err := lookupChart(bytes.NewReader(doc), "wanted")
					if err != nil || len(v) != 2 {
						b.Fatalf("lookupChart = %d versions, %v", len(v), err)
					}
				}
			})
		}
	}
}
