package publish

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/trust"
)

func TestSignRecord(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kubevirt-1.9.0-1.yaml")
	data, err := index.MarshalRecord(testRecord("kubevirt", "1.9.0", "oci://r/kubevirt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	a, _ := trust.GenerateKey(rand.Reader)
	b, _ := trust.GenerateKey(rand.Reader)
	for i, tc := range []struct {
		key  *trust.PrivateKey
		want int
	}{{a, 1}, {a, 1}, {b, 2}} {
		rec, sidecar, n, err := SignRecord(file, tc.key)
		if err != nil || rec.Metadata.Name != "kubevirt" || n != tc.want || sidecar != filepath.Join(dir, "kubevirt-1.9.0-1.sig.yaml") {
			t.Fatalf("SignRecord #%d = %v, %q, %d, %v; want %d signatures in kubevirt-1.9.0-1.sig.yaml", i, rec, sidecar, n, err, tc.want)
		}
	}
	// Several keys at once (trust sign --sign-key A --sign-key B): one
	// write, each key's signature replacing its earlier one.
	c, _ := trust.GenerateKey(rand.Reader)
	if _, _, n, err := SignRecord(file, a, c); err != nil || n != 3 {
		t.Fatalf("SignRecord with a signed key and a new one = %d, %v; want 3 signatures", n, err)
	}
	if _, _, _, err := SignRecord(file); err == nil || !strings.Contains(err.Error(), "needs a key") {
		t.Errorf("SignRecord without a key = %v; want an error saying it needs one", err)
	}
	if err := os.WriteFile(file, []byte("kind: PackageSource\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := SignRecord(file, a); err == nil || !strings.Contains(err.Error(), file+": ") {
		t.Errorf("SignRecord of a broken record = %v; want an error naming the file", err)
	}
}
