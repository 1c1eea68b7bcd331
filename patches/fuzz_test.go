package patches

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzSplit feeds Split arbitrary manifests: it must not panic, every
// document it keeps must be a verbatim piece of the input, and every
// object must resolve its aliases (bounded) and serialize.
func FuzzSplit(f *testing.F) {
	for _, dir := range []string{"testdata/split", "testdata/anchors"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("--- |\n  text\n...\n---\nkind: X\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		objs, err := Split("fuzz.yaml", data)
		if err != nil {
			return
		}
		for _, o := range objs {
			if o.doc != nil && !bytes.Contains(data, o.doc.raw) {
				t.Fatalf("document of %s is not a piece of the input: %q", o, o.doc.raw)
			}
			if _, err := resolveAliases(o.Node.YNode()); err != nil {
				continue
			}
			if _, err := o.Bytes(); err != nil {
				continue
			}
		}
	})
}
