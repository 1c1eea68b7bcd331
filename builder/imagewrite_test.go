package builder

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestImageEntryComment(t *testing.T) {
	for _, tc := range []struct {
		e    ImageEntry
		want string
	}{
		{ImageEntry{Ref: "a", Charts: []string{"api", "web"}}, "rendered by chart api, web"},
		{ImageEntry{Ref: "a", Declared: "a"}, "no chart renders it (deployed by an operator?)"},
		{ImageEntry{Ref: "a", Charts: []string{"api"}, Err: errors.New("no access")}, "TODO: pin; looking up the digest failed"},
	} {
		if got := tc.e.Comment(); got != tc.want {
			t.Errorf("%+v.Comment() = %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestWriteImages(t *testing.T) {
	const d = "@sha256:2222222222222222222222222222222222222222222222222222222222222222"
	file := filepath.Join(t.TempDir(), "recipe.yaml")
	in := "spec:\n  package:\n    images:\n      - quay.io/x/operator:v1  # TODO: pin\n    variants: []\n"
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	entries := []ImageEntry{
		{Ref: "quay.io/x/operator:v1" + d, Declared: "quay.io/x/operator:v1"},
		{Ref: "docker.io/library/busybox:1.36" + d, Charts: []string{"x"}},
	}
	if err := WriteImages(file, entries); err != nil {
		t.Fatalf("WriteImages: %v", err)
	}
	got, _ := os.ReadFile(file)
	want := "spec:\n  package:\n    images:\n      - quay.io/x/operator:v1" + d + " # TODO: pin\n      - docker.io/library/busybox:1.36" + d + "  # rendered by chart x\n    variants: []\n"
	if string(got) != want {
		t.Errorf("WriteImages wrote\n%s\nwant\n%s", got, want)
	}
	if err := os.WriteFile(file, []byte("spec:\n  package:\n    images: [a]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteImages(file, entries[1:]); err == nil || !strings.Contains(err.Error(), file+": ") {
		t.Errorf("WriteImages of a flow list = %v, want an error naming %s", err, file)
	}
}

func TestUnpinnedImages(t *testing.T) {
	if err := UnpinnedImages([]ImageEntry{{Ref: "a@sha256:1"}}); err != nil {
		t.Errorf("UnpinnedImages of pinned entries = %v, want nil", err)
	}
	err := UnpinnedImages([]ImageEntry{{Ref: "a:1", Err: errors.New("image a:1: no access")}, {Ref: "b@sha256:1"}})
	if !errors.Is(err, ErrUnpinned) || !strings.Contains(err.Error(), "1 images are not pinned") || !strings.HasSuffix(err.Error(), "  image a:1: no access") {
		t.Errorf("UnpinnedImages = %v, want the one unpinned image", err)
	}
}
