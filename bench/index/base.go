package main

import (
	"bufio"
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

var (
	base      = flag.Int("base", 0, "only write a signed base index of this many versions into DIR/site (with -dir; its key in DIR/index.key and .pub) and exit: the input of the memory measurements of repo verify and publish --index")
	baseSmall = flag.Bool("base-small", false, "with -base: versions of about 500 bytes (one component, one image) instead of the realistic ~3.4 KB")
)

// writeBase writes a signed index of n versions (100 a package) into
// dir/site without kbuild repo index: the records are made and rendered
// in this process, as fast as the index can be written.
func writeBase(dir string, n int, small bool) error {
	site := filepath.Join(dir, "site")
	if err := os.MkdirAll(site, 0o755); err != nil {
		return err
	}
	key, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	priv, _ := key.MarshalPEM()
	if err := os.WriteFile(filepath.Join(dir, "index.key"), priv, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "index.pub"), key.Public().PEM(), 0o644); err != nil {
		return err
	}
	b := index.NewBuilder(index.Compact())
	for i := 0; i < n; i++ {
		p, v := i/100, i%100
		rec := record(p, v)
		if small {
			rec.Spec.Provides, rec.Spec.CRDs, rec.Spec.Permissions = nil, nil, nil
			rec.Spec.Images = rec.Spec.Images[:1]
			rec.Spec.Variants = []spec.Variant{{Name: "default", Components: []spec.Component{{Name: "operator", Chart: rec.Spec.Variants[0].Components[0].Chart}}}}
			rec.Metadata.Annotations = nil
		}
		if err := b.Add(rec.Metadata.Name, rec, nil); err != nil {
			return err
		}
	}
	now := time.Now().UTC().Truncate(time.Second)
	r, err := b.Render(now.Add(-time.Hour), now.Add(30*24*time.Hour))
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(site, "index.yaml"))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := r.WriteTo(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	sigs, _, err := trust.SignParts(r.Parts(), key)
	if err != nil {
		return err
	}
	sig, err := index.MarshalSignatures(sigs)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(site, "index.yaml.sig"), sig, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s: %d versions, %d bytes\n", filepath.Join(site, "index.yaml"), n, r.Size())
	return nil
}
