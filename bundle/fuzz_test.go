package bundle

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen feeds open (the reader of untrusted bundle files) arbitrary
// bytes: it must refuse or accept, never panic, and never leave a file
// outside its own handle.
func FuzzOpen(f *testing.F) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range []struct{ name, body string }{
		{"oci-layout", `{"imageLayoutVersion":"1.0.0"}`},
		{"index.json", `{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"sha256:` + "0000000000000000000000000000000000000000000000000000000000000000" + `","size":2,"artifactType":"` + ArtifactType + `"}]}`},
		{"blobs/sha256/0000000000000000000000000000000000000000000000000000000000000000", "{}"},
	} {
		tw.WriteHeader(&tar.Header{Name: e.name, Size: int64(len(e.body)), Mode: 0o644, Typeflag: tar.TypeReg})
		tw.Write([]byte(e.body))
	}
	tw.Close()
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "b.tar")
		os.WriteFile(p, data, 0o644)
		b, err := open(p, makeOptions(nil))
		if err == nil {
			b.Close()
		}
	})
}
