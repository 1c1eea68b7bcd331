package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"testing"
)

// testArchive returns a chart archive of name holding only its Chart.yaml
// (the targets store any bytes; how builder.Pack makes them reproducible
// is tested in builder).
func testArchive(t testing.TB, name string) []byte {
	t.Helper()
	chartYAML := []byte("apiVersion: v2\nname: " + name + "\nversion: 1.0.0-1\n")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := tw.WriteHeader(&tar.Header{Name: name + "/Chart.yaml", Mode: 0o644, Size: int64(len(chartYAML)), Typeflag: tar.TypeReg})
	if err == nil {
		_, err = tw.Write(chartYAML)
	}
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
