package bundle

import (
	"context"
	"sort"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/trust"
)

// Inspection is what Inspect reads from a bundle.
type Inspection struct {
	Contents
	// Generated and Expires are the bundled index's times.
	Generated string `json:"indexGenerated"`
	Expires   string `json:"indexExpires,omitempty"`
	// Blobs and Bytes count the bundle's blobs.
	Blobs int   `json:"blobs"`
	Bytes int64 `json:"bytes"`
	// SignedBy are the signatures of the index: whose key each is, as
	// far as Inspect can tell without keys of its own (IndexSigner).
	SignedBy []IndexSigner `json:"indexSignedBy"`
	// Sigstore counts the charts' Sigstore bundles (cosign signatures and
	// attestations) the bundle carries to the mirror.
	Sigstore int `json:"sigstoreBundles"`
}

// Inspect reads the bundle file without keys: when it was made, its
// packages, charts and images. Who pins each image is taken from the
// bundled index (the signed one, not bundle.json), which Inspect parses
// but cannot verify: use Import with keys for that. Every blob is hashed
// and every manifest walked, so a damaged or incomplete bundle is refused
// here too.
func Inspect(ctx context.Context, file string, opts ...Option) (*Inspection, error) {
	o := makeOptions(opts)
	b, err := open(file, o)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	for _, d := range b.top.Manifests[1:] {
		if _, err := verifyTree(b, d, d.Annotations[AnnotationKind]+" "+d.Annotations[AnnotationRef], true, o); err != nil {
			return nil, err
		}
	}
	if err := b.checkAllBlobs(); err != nil {
		return nil, err
	}
	x, err := index.ParseIndex(b.files[sitelayout.IndexFile])
	if err != nil {
		return nil, bad(file, "index.yaml: %v", err)
	}
	var sel []Selected
	for _, p := range b.c.Packages {
		if v := x.Find(p.Name, p.Version, p.Build); v != nil && v.Digest == p.Digest {
			sel = append(sel, Selected{Name: p.Name, Version: *v})
		}
	}
	charts, images, err := pins(sel)
	if err != nil {
		return nil, err
	}
	in := &Inspection{Contents: b.c, Generated: x.Generated.UTC().Format("2006-01-02T15:04:05Z")}
	if !x.Expires.IsZero() {
		in.Expires = x.Expires.UTC().Format("2006-01-02T15:04:05Z")
	}
	for i := range in.Images {
		in.Images[i].PinnedBy = nil
		if im := images[in.Images[i].Ref]; im != nil && im.Digest == in.Images[i].Digest {
			in.Images[i].PinnedBy = im.PinnedBy
		}
	}
	for i := range in.Charts {
		in.Charts[i].PinnedBy = nil
		if ch := charts[in.Charts[i].Ref]; ch != nil && ch.Digest == in.Charts[i].Digest {
			in.Charts[i].PinnedBy = ch.PinnedBy
		}
	}
	var root *trust.Root
	if data := b.files[sitelayout.RootFile]; data != nil {
		root, _ = trust.ParseRoot(data)
	}
	if in.SignedBy, err = indexSigners(b.files, root); err != nil {
		return nil, bad(file, "index.yaml.sig: %v", err)
	}
	for f := range b.files {
		if sigstoreName.MatchString(f) {
			in.Sigstore++
		}
	}
	for _, n := range b.sizes {
		in.Blobs++
		in.Bytes += n
	}
	sort.Slice(in.Images, func(i, j int) bool { return in.Images[i].Ref < in.Images[j].Ref })
	return in, nil
}
