// Command bundle prepares the bundle benchmark (bench/bundle/run.sh): it
// pushes generated images under quay.io/bench/... repository paths into a
// source registry, streaming each layer from a file, and writes a site
// whose signed index has one package pinning them all.
//
//	go run ./bench/bundle -registry 127.0.0.1:5000 -site DIR -images 8 -layers 4 -size 1073741824
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

func main() {
	reg := flag.String("registry", "", "source registry host:port")
	site := flag.String("site", "", "site directory to write")
	images := flag.Int("images", 8, "number of images")
	layers := flag.Int("layers", 4, "layers per image")
	size := flag.Int64("size", 1<<30, "total bytes of all layers")
	flag.Parse()
	if *reg == "" || *site == "" {
		log.Fatal("-registry and -site are required")
	}
	tmp, err := os.MkdirTemp("", "bench-bundle-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	per := *size / int64(*images**layers)
	rnd := rand.NewChaCha8([32]byte{1})
	var refs []string
	for i := range *images {
		img := empty.Image
		for j := range *layers {
			l, err := writeLayer(filepath.Join(tmp, fmt.Sprintf("%d-%d", i, j)), per, rnd)
			if err != nil {
				log.Fatal(err)
			}
			if img, err = mutate.AppendLayers(img, l); err != nil {
				log.Fatal(err)
			}
		}
		img = mutate.MediaType(img, types.OCIManifestSchema1)
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
		repo := fmt.Sprintf("quay.io/bench/img%d:v1", i)
		ref, err := name.ParseReference(*reg+"/"+repo, name.Insecure)
		if err != nil {
			log.Fatal(err)
		}
		if err := remote.Write(ref, img); err != nil {
			log.Fatal(err)
		}
		d, _ := img.Digest()
		refs = append(refs, repo+"@"+d.String())
		for j := range *layers {
			os.Remove(filepath.Join(tmp, fmt.Sprintf("%d-%d", i, j)))
		}
	}
	key, err := trust.GenerateKey(nil)
	if err != nil {
		log.Fatal(err)
	}
	b := index.NewBuilder()
	rec := &spec.PackageSource{APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind, Metadata: spec.RecordMetadata{Name: "bench"},
		Spec: spec.PackageSpec{Version: "1.0.0", Build: 1, Images: refs}}
	if err := b.Add("bench", rec, nil); err != nil {
		log.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	data, err := b.Marshal(now, now.Add(24*time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	sigs, _ := trust.Sign(data, key)
	sig, _ := index.MarshalSignatures(sigs)
	os.MkdirAll(*site, 0o755)
	os.WriteFile(filepath.Join(*site, "index.yaml"), data, 0o644)
	os.WriteFile(filepath.Join(*site, "index.yaml.sig"), sig, 0o644)
	os.WriteFile(filepath.Join(*site, "index.pub"), key.Public().PEM(), 0o644)
	for _, r := range refs {
		fmt.Println(r)
	}
}

// writeLayer writes n random bytes to p and returns them as an
// uncompressed layer read from the file.
func writeLayer(p string, n int64, rnd io.Reader) (v1.Layer, error) {
	f, err := os.Create(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(f, h), rnd, n); err != nil {
		return nil, err
	}
	d, _ := v1.NewHash("sha256:" + hex.EncodeToString(h.Sum(nil)))
	return &fileLayer{p, d, n}, f.Close()
}

type fileLayer struct {
	path string
	d    v1.Hash
	n    int64
}

func (l *fileLayer) Digest() (v1.Hash, error)             { return l.d, nil }
func (l *fileLayer) DiffID() (v1.Hash, error)             { return l.d, nil }
func (l *fileLayer) Compressed() (io.ReadCloser, error)   { return os.Open(l.path) }
func (l *fileLayer) Uncompressed() (io.ReadCloser, error) { return os.Open(l.path) }
func (l *fileLayer) Size() (int64, error)                 { return l.n, nil }
func (l *fileLayer) MediaType() (types.MediaType, error)  { return types.OCIUncompressedLayer, nil }
