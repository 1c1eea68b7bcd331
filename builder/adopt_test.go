package builder

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/sources"
)

// otherToolArchive packs files the way another tool might: entries in
// reverse order, another compression level, and edit applied to the
// files first.
func otherToolArchive(t *testing.T, top string, files map[string][]byte, edit func(map[string][]byte)) *Archive {
	t.Helper()
	edit(files)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: top + "/" + n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg, ModTime: time.Unix(1e9, 0)}); err != nil {
			t.Fatal(err)
		}
		tw.Write(files[n])
	}
	tw.Close()
	zw.Close()
	sum := sha256.Sum256(buf.Bytes())
	return &Archive{Name: top, Data: buf.Bytes(), Digest: "sha256:" + hex.EncodeToString(sum[:])}
}

// TestAdopt publishes a chart as another tool would (same files, other
// archive bytes, a Chart.yaml that says the same differently), then builds
// the recipe over it: refused without WithAdopt, adopted with it (the
// record keeps the published archive digest), and refused naming the file
// when a file differs.
func TestAdopt(t *testing.T) {
	ctx := context.Background()
	fetch, err := sources.New(sources.WithCacheDir(t.TempDir()), sources.WithOffline(true))
	if err != nil {
		t.Fatal(err)
	}
	recipeDir := filepath.Join("..", "examples", "smart-proxy")
	prep, err := New(fetch, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := prep.Prepare(ctx, recipeDir)
	if err != nil {
		t.Fatal(err)
	}
	c := p.Charts[0]
	repo, tag := p.Recipe.Metadata.Name+"/"+c.Key, OCITag(ChartVersion(p.Recipe))
	for _, tc := range []struct {
		name    string
		edit    func(map[string][]byte)
		adopt   bool
		wantErr string
		is      error
	}{
		{name: "refused without adopt", edit: func(map[string][]byte) {}, wantErr: "another tool such as kubepkg may have published it", is: ErrImmutable},
		{name: "adopted", adopt: true, edit: func(f map[string][]byte) {
			f["Chart.yaml"] = append([]byte("# packaged by kubepkg\n"), f["Chart.yaml"]...)
		}},
		{name: "a template differs", adopt: true, edit: func(f map[string][]byte) {
			f["templates/service.yaml"] = append(f["templates/service.yaml"], "# changed\n"...)
		}, wantErr: "first differing file smart-proxy/templates/service.yaml", is: ErrNotAdoptable},
		{name: "Chart.yaml means something else", adopt: true, edit: func(f map[string][]byte) {
			f["Chart.yaml"] = bytes.Replace(f["Chart.yaml"], []byte("description:"), []byte("description: other\nx-description:"), 1)
		}, wantErr: "first differing file smart-proxy/Chart.yaml (its fields differ)", is: ErrNotAdoptable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, err := oci.NewLayoutTarget(filepath.Join(t.TempDir(), "oci"), "")
			if err != nil {
				t.Fatal(err)
			}
			all, err := archiveFiles(c.Archive.Data)
			if err != nil {
				t.Fatal(err)
			}
			files := map[string][]byte{}
			for n, f := range all {
				files[strings.TrimPrefix(n, c.Archive.Name+"/")] = f.data
			}
			other := otherToolArchive(t, c.Archive.Name, files, tc.edit)
			img, err := oci.ChartImage(other.Data, c.Rendered.Chart.Metadata, time.Unix(1e9, 0))
			if err != nil {
				t.Fatal(err)
			}
			if err := target.Push(ctx, repo, tag, img); err != nil {
				t.Fatal(err)
			}
			b, err := New(fetch, target, WithOutputDir(t.TempDir()), WithAdopt(tc.adopt))
			if err != nil {
				t.Fatal(err)
			}
			res, err := b.Publish(ctx, p)
			if tc.wantErr != "" {
				if err == nil || !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Publish = %v, want %v containing %q", err, tc.is, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Publish = %v", err)
			}
			if len(res.Adopted) != 1 || !strings.Contains(res.Adopted[0], "adopted, keeping its archive digest "+other.Digest) || len(res.Pushed) != 0 {
				t.Fatalf("Adopted = %q, Pushed = %q", res.Adopted, res.Pushed)
			}
			got := res.Record.Spec.Variants[0].Components[0].Chart.Digest
			published, _ := img.Digest()
			if got != other.Digest || res.Info.Charts[0].Manifest != published.String() {
				t.Errorf("record pins archive %s manifest %s, want the published %s %s", got, res.Info.Charts[0].Manifest, other.Digest, published)
			}
		})
	}
}
