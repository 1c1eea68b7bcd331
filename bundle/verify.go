package bundle

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"kbuild.dev/kbuild/internal/chartpin"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/trust"
)

// node is a manifest to push, with its blobs and children (children are
// pushed first).
type node struct {
	desc     v1.Descriptor
	children []*node
	named    int // for an index, how many manifests it names
	blobs    []v1.Descriptor
}

// verified is a bundle whose every byte checked out against the signed
// index: what Import pushes.
type verified struct {
	v        *trust.Verified
	charts   []*pushable
	images   []*pushable
	sigstore []signedChart
}

type pushable struct {
	kind     string
	ref      string // original: oci://host/path/name:tag or registry/repo:tag@digest
	registry string
	repo     string // repository path in the original registry
	tag      string
	root     *node
	pinnedBy []string
}

// verifyBundle checks the opened bundle against trust: the index and its
// signatures as a subscriber does, bundle.json against the index, every
// manifest the bundle lists against what the chosen versions pin, and
// every blob of every chart and image against its digest.
func verifyBundle(b *opened, tr *trust.Trust, state *trust.State, o *options) (*verified, error) {
	t := *tr
	t.Latest = b.files[sitelayout.RootFile]
	if t.Latest != nil {
		if r, err := trust.ParseRoot(t.Latest); err == nil && r.Signed.Version > 0 && r.Signed.Version <= 1000 {
			t.Roots = make([][]byte, r.Signed.Version)
			for i := range t.Roots {
				t.Roots[i] = b.files[fmt.Sprintf("root/%d.yaml", i+1)]
			}
		}
	}
	v, err := trust.Verify(b.files[sitelayout.IndexFile], b.files[sitelayout.SignatureFile], &t, trust.VerifyOptions{Now: o.now, State: state})
	if err != nil {
		return nil, fmt.Errorf("%s: the bundle's %w", b.file, err)
	}
	if got := sha256Hex(b.files[sitelayout.IndexFile]); got != b.c.Index {
		return nil, bad(b.file, "%s names index %s, the bundle holds %s", ContentsFile, b.c.Index, got)
	}
	var sel []Selected
	for _, p := range b.c.Packages {
		iv := v.Index.Find(p.Name, p.Version, p.Build)
		if iv == nil {
			return nil, bad(b.file, "%s lists %s %s build %d, which the signed index does not have (or drops for want of delegated signatures)", ContentsFile, p.Name, p.Version, p.Build)
		}
		if iv.Digest != p.Digest {
			return nil, bad(b.file, "%s lists %s %s build %d with spec digest %s, the signed index pins %s", ContentsFile, p.Name, p.Version, p.Build, p.Digest, iv.Digest)
		}
		sel = append(sel, Selected{Name: p.Name, Version: *iv, Reason: p.Reason})
	}
	charts, images, err := pins(sel)
	if err != nil {
		return nil, err
	}
	keys, err := indexKeys(tr, v)
	if err != nil {
		return nil, err
	}
	if err := verifyProvenance(b, sel, keys); err != nil {
		return nil, err
	}
	out := &verified{v: v}
	have := map[string]bool{}
	for _, d := range b.top.Manifests[1:] {
		ref := d.Annotations[AnnotationRef]
		switch d.Annotations[AnnotationKind] {
		case kindChart:
			cref := strings.TrimPrefix(ref, "oci://")
			ch := charts[cref]
			if ch == nil {
				return nil, bad(b.file, "the bundle lists chart %s (manifest %s), which the signed index does not pin for the bundled versions", ref, d.Digest)
			}
			have["c"+cref] = true
			p, err := verifyChart(b, d, ch)
			if err != nil {
				return nil, err
			}
			out.charts = append(out.charts, p)
		case kindImage:
			im := images[ref]
			if im == nil || im.Digest != d.Digest.String() {
				return nil, bad(b.file, "the bundle lists image %s with digest %s, which the signed index does not pin for the bundled versions", ref, d.Digest)
			}
			have["i"+ref] = true
			r, _ := ParseImageRef(ref)
			root, err := verifyTree(b, d, "image "+ref, true, o)
			if err != nil {
				return nil, err
			}
			out.images = append(out.images, &pushable{kind: kindImage, ref: ref, registry: r.Registry, repo: r.Repository, tag: r.Tag, root: root, pinnedBy: im.PinnedBy})
		default:
			return nil, bad(b.file, "the bundle index lists %s of unknown kind %q", d.Digest, d.Annotations[AnnotationKind])
		}
	}
	for _, ref := range slices.Sorted(maps.Keys(charts)) {
		if !have["c"+ref] {
			return nil, bad(b.file, "chart %s (pinned by %s, archive %s) is missing from the bundle", ref, strings.Join(charts[ref].PinnedBy, ", "), charts[ref].Digest)
		}
	}
	for _, ref := range slices.Sorted(maps.Keys(images)) {
		if !have["i"+ref] {
			return nil, bad(b.file, "image %s (pinned by %s) is missing from the bundle", ref, strings.Join(images[ref].PinnedBy, ", "))
		}
	}
	if out.sigstore, err = verifySigstore(b, out.charts, keys); err != nil {
		return nil, err
	}
	return out, nil
}

// verifyChart checks a chart's manifest and blobs; its chart layer must be
// the archive the index pins.
func verifyChart(b *opened, d v1.Descriptor, ch *Chart) (*pushable, error) {
	what := fmt.Sprintf("chart %s (pinned by %s)", ch.Ref, strings.Join(ch.PinnedBy, ", "))
	raw, err := b.readBlob(d, what+" manifest", maxManifestSize)
	if err != nil {
		return nil, err
	}
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, bad(b.file, "%s: manifest %s: %v", what, d.Digest, err)
	}
	n := &node{desc: d}
	var archive []string
	for _, l := range append([]v1.Descriptor{m.Config}, m.Layers...) {
		if string(l.MediaType) == chartpin.ChartLayerMediaType {
			archive = append(archive, l.Digest.String())
			if l.Digest.String() != ch.Digest {
				return nil, bad(b.file, "%s: the bundle's chart archive is %s, the package pins %s", what, l.Digest, ch.Digest)
			}
			if got, ok := b.actual[ch.Digest]; ok {
				return nil, bad(b.file, "%s: the bundle's chart archive has digest %s, the package pins %s; the bundle was changed after it was made", what, got, ch.Digest)
			}
		}
		if err := b.check(l, what); err != nil {
			return nil, err
		}
		n.blobs = append(n.blobs, l)
	}
	if len(archive) != 1 {
		return nil, bad(b.file, "%s: manifest %s has %d chart layers, want 1", what, d.Digest, len(archive))
	}
	repoTag := ch.Ref
	i := strings.LastIndex(repoTag, ":")
	host, repo, _ := strings.Cut(repoTag[:i], "/")
	return &pushable{kind: kindChart, ref: "oci://" + ch.Ref, registry: host, repo: repo, tag: repoTag[i+1:], root: n, pinnedBy: ch.PinnedBy}, nil
}

// verifyTree checks an image manifest or index and everything under it.
func verifyTree(b *opened, d v1.Descriptor, what string, top bool, o *options) (*node, error) {
	raw, err := b.readBlob(d, what, maxManifestSize)
	if err != nil {
		return nil, err
	}
	n := &node{desc: d}
	if d.MediaType.IsIndex() {
		var ix v1.IndexManifest
		if err := json.Unmarshal(raw, &ix); err != nil {
			return nil, bad(b.file, "%s: image index %s: %v", what, d.Digest, err)
		}
		n.named = len(ix.Manifests)
		for _, c := range ix.Manifests {
			if top && len(b.c.Platforms) > 0 && c.Platform != nil && !wantPlatform(b.c.Platforms, c.Platform) && !b.has(c.Digest.String()) {
				continue // filtered out when the bundle was made
			}
			child, err := verifyTree(b, c, fmt.Sprintf("%s platform %s", what, platformString(c.Platform)), false, o)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, child)
		}
		return n, nil
	}
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, bad(b.file, "%s: manifest %s: %v", what, d.Digest, err)
	}
	for _, l := range append([]v1.Descriptor{m.Config}, m.Layers...) {
		if len(l.URLs) > 0 {
			continue
		}
		if err := b.check(l, what); err != nil {
			return nil, err
		}
		n.blobs = append(n.blobs, l)
	}
	return n, nil
}

func platformString(p *v1.Platform) string {
	if p == nil {
		return "(none)"
	}
	return p.String()
}
