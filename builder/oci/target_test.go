package oci

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"helm.sh/helm/v3/pkg/chart"
)

// TestLayoutTargetSorted pushes the same charts and a referrer into two
// layouts in opposite orders: index.json must be byte-identical.
func TestLayoutTargetSorted(t *testing.T) {
	ctx := context.Background()
	var imgs []v1.Image
	var names []string
	for _, n := range []string{"alpha", "beta", "gamma"} {
		img, err := ChartImage(testArchive(t, n), &chart.Metadata{APIVersion: "v2", Name: n, Version: "1.0.0-1"}, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		imgs, names = append(imgs, img), append(names, n)
	}
	desc, err := partial.Descriptor(imgs[0])
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ReferrerImage(*desc, "application/vnd.test", "application/vnd.test.layer", []byte("x"), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	write := func(order []int) []byte {
		dir := filepath.Join(t.TempDir(), "oci")
		l, err := NewLayoutTarget(dir, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range order {
			if i < 0 {
				if err := l.PushReferrer(ctx, "pkg/alpha", ref); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := l.Push(ctx, "pkg/"+names[i], "1.0.0-1", imgs[i]); err != nil {
				t.Fatal(err)
			}
		}
		data, err := os.ReadFile(filepath.Join(dir, "index.json"))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	a, b := write([]int{0, -1, 1, 2}), write([]int{2, 1, -1, 0})
	if string(a) != string(b) {
		t.Errorf("index.json depends on push order:\n%s\n---\n%s", a, b)
	}
}

// TestLayoutTargetLazy checks that a layout target nothing is pushed to
// leaves no directory behind.
func TestLayoutTargetLazy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dist", "oci")
	l, err := NewLayoutTarget(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := l.Lookup(context.Background(), "pkg/x", "1.0.0-1"); ok || err != nil {
		t.Fatalf("Lookup in an absent layout = %v, %v; want not found", ok, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("layout %s exists before any push (%v)", dir, err)
	}
}
