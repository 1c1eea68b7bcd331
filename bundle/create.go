package bundle

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/internal/chartpin"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// maxManifestSize caps a manifest or image index read from a registry or
// a bundle; maxSiteFile caps an SBOM, provenance or build-info file.
const (
	maxManifestSize = 4 << 20
	maxSiteFile     = 64 << 20
)

// artifact is a chart or image to copy: its top manifest and, in walk
// order, every manifest and blob under it.
type artifact struct {
	kind      string
	ref       string // AnnotationRef
	repo      name.Repository
	desc      v1.Descriptor // of the top manifest
	manifests []rawBlob     // top first, then children
	blobs     []v1.Descriptor
	chart     *Chart
	image     *Image
}

type rawBlob struct {
	digest string
	data   []byte
}

// Create verifies the index at site (a directory or http(s) URL) with
// trust exactly as `kbuild repo verify` does, resolves wants (Resolve),
// and writes the bundle to out: a temporary file renamed into place when
// complete, so a failed Create leaves nothing. Blobs stream from their
// registries into the file while their sha256 is checked, one at a time,
// in constant memory. It returns what the bundle holds.
func Create(ctx context.Context, out, site string, trust *trust.Trust, wants []Want, opts ...Option) (*Contents, error) {
	o := makeOptions(opts)
	for _, p := range o.platforms {
		if _, err := v1.ParsePlatform(p); err != nil || !strings.Contains(p, "/") {
			return nil, fmt.Errorf("platform %q: want os/arch[/variant], e.g. linux/amd64", p)
		}
	}
	var siteOpts []siteread.Option
	if o.timeout > 0 {
		siteOpts = append(siteOpts, siteread.WithTimeout(o.timeout))
	}
	s, err := siteread.New(site, siteOpts...)
	if err != nil {
		return nil, err
	}
	files, v, err := fetchVerified(ctx, s, trust, o.now)
	if err != nil {
		return nil, err
	}
	for _, w := range v.Warnings {
		o.logf("warning: %s", w)
	}
	if err := fetchSignerKeys(ctx, s, files); err != nil {
		return nil, err
	}
	res, err := Resolve(v.Index, wants)
	if err != nil {
		return nil, err
	}
	for _, n := range res.Notes {
		o.logf("note: %s", n)
	}
	c := &Contents{Created: o.epoch, Index: sha256Hex(files[sitelayout.IndexFile]), Platforms: slices.Sorted(slices.Values(o.platforms))}
	if c.Created.IsZero() {
		c.Created = v.Generated.UTC()
	}
	for _, p := range res.Packages {
		c.Packages = append(c.Packages, Package{Name: p.Name, Version: p.Version.Version, Build: p.Version.Build, Digest: p.Version.Digest, Reason: p.Reason})
		key := dist.Key(p.Name, p.Version.Version, p.Version.Build)
		for _, f := range []string{"sbom/" + key + ".cdx.json", "provenance/" + key + ".intoto.json", "build/" + key + ".build.yaml"} {
			b, err := s.Fetch(ctx, f, maxSiteFile)
			if errors.Is(err, siteread.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			files[f] = b
		}
	}
	arts, err := collect(ctx, res.Packages, o)
	if err != nil {
		return nil, err
	}
	keys, err := indexKeys(trust, v)
	if err != nil {
		return nil, err
	}
	kc, err := siteKeyless(ctx, s, o)
	if err != nil {
		return nil, err
	}
	sigs, err := fetchSigstore(ctx, arts, keys, kc, o)
	if err != nil {
		return nil, err
	}
	maps.Copy(files, sigs)
	if kc != nil {
		files[sigstoreTrustedRoot], files[sigstoreIdentity] = kc.root, kc.identity
	}
	for _, a := range arts {
		if a.chart != nil {
			c.Charts = append(c.Charts, *a.chart)
		} else {
			c.Images = append(c.Images, *a.image)
		}
	}
	for f := range files {
		c.Files = append(c.Files, f)
	}
	sort.Strings(c.Files)
	if err := write(ctx, out, c, files, arts, o); err != nil {
		return nil, err
	}
	return c, nil
}

// fetchVerified reads the site's index, signature and roots and verifies
// them; it returns the files by name.
func fetchVerified(ctx context.Context, s *siteread.Site, tr *trust.Trust, now time.Time) (map[string][]byte, *trust.Verified, error) {
	data, sig, err := s.Index(ctx)
	if err != nil {
		return nil, nil, err
	}
	t := *tr
	if err := s.Roots(ctx, &t, 1); err != nil {
		return nil, nil, err
	}
	v, err := trust.Verify(data, sig, &t, trust.VerifyOptions{Now: now})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.Location(s.IndexName()), err)
	}
	files := map[string][]byte{sitelayout.IndexFile: data}
	if sig != nil {
		files[sitelayout.SignatureFile] = sig
	}
	if t.Latest != nil {
		files[sitelayout.RootFile] = t.Latest
	}
	for i, r := range t.Roots {
		if r != nil {
			files[fmt.Sprintf("root/%d.yaml", i+1)] = r
		}
	}
	return files, v, nil
}

// pins returns the charts and images the chosen versions pin, each with
// the versions pinning it, sorted by reference.
func pins(pkgs []Selected) (charts map[string]*Chart, images map[string]*Image, err error) {
	charts, images = map[string]*Chart{}, map[string]*Image{}
	for _, p := range pkgs {
		who := fmt.Sprintf("%s %s build %d", p.Name, p.Version.Version, p.Version.Build)
		for _, va := range p.Version.Spec.Variants {
			for _, comp := range va.Components {
				if comp.Chart == nil {
					continue
				}
				if !strings.HasPrefix(comp.Chart.Repository, "oci://") || !validDigest(comp.Chart.Digest) {
					return nil, nil, fmt.Errorf("%s component %s: chart %s is not pinned as oci://HOST/PATH with a sha256 digest", who, comp.Name, comp.Chart.Name)
				}
				ref := chartpin.Ref(comp.Chart)
				ch := charts[ref]
				if ch == nil {
					ch = &Chart{Ref: ref, Digest: comp.Chart.Digest}
					charts[ref] = ch
				} else if ch.Digest != comp.Chart.Digest {
					return nil, nil, fmt.Errorf("chart %s is pinned as %s by %s and as %s by %s", ref, ch.Digest, ch.PinnedBy[0], comp.Chart.Digest, who)
				}
				if !slices.Contains(ch.PinnedBy, who) {
					ch.PinnedBy = append(ch.PinnedBy, who)
				}
			}
		}
		for _, s := range p.Version.Spec.Images {
			r, err := ParseImageRef(s)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w; pin it in the recipe and publish a new build", who, err)
			}
			im := images[r.String()]
			if im == nil {
				im = &Image{Ref: r.String(), Digest: r.Digest}
				images[r.String()] = im
			}
			if !slices.Contains(im.PinnedBy, who) {
				im.PinnedBy = append(im.PinnedBy, who)
			}
		}
	}
	return charts, images, nil
}

// collect fetches the manifests of every chart and image and lists their
// blobs.
func collect(ctx context.Context, pkgs []Selected, o *options) ([]*artifact, error) {
	charts, images, err := pins(pkgs)
	if err != nil {
		return nil, err
	}
	ropts := o.remote(ctx)
	var arts []*artifact
	for _, ref := range slices.Sorted(maps.Keys(charts)) {
		ch := charts[ref]
		a, err := fetchChart(ref, ch, o, ropts)
		if err != nil {
			return nil, fmt.Errorf("chart %s (pinned by %s): %w", ref, strings.Join(ch.PinnedBy, ", "), err)
		}
		arts = append(arts, a)
	}
	for _, ref := range slices.Sorted(maps.Keys(images)) {
		im := images[ref]
		a, err := fetchImage(im, o, ropts)
		if err != nil {
			return nil, fmt.Errorf("image %s (pinned by %s): %w", ref, strings.Join(im.PinnedBy, ", "), err)
		}
		arts = append(arts, a)
	}
	return arts, nil
}

func nameOpts(o *options) []name.Option {
	if o.plainHTTP {
		return []name.Option{name.Insecure}
	}
	return nil
}

func fetchChart(ref string, ch *Chart, o *options, ropts []remote.Option) (*artifact, error) {
	tag, err := name.NewTag(ref, nameOpts(o)...)
	if err != nil {
		return nil, err
	}
	d, err := remote.Get(tag, ropts...)
	if err != nil {
		return nil, err
	}
	if len(d.Manifest) > maxManifestSize {
		return nil, fmt.Errorf("manifest is larger than %d bytes", maxManifestSize)
	}
	var m v1.Manifest
	if err := json.Unmarshal(d.Manifest, &m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	var got []string
	for _, l := range m.Layers {
		if string(l.MediaType) == chartpin.ChartLayerMediaType {
			got = append(got, l.Digest.String())
		}
	}
	if len(got) != 1 || got[0] != ch.Digest {
		return nil, fmt.Errorf("the registry's chart archive is %s, but the index pins %s; the chart was pushed again after the index was signed", strings.Join(got, ", "), ch.Digest)
	}
	ch.Manifest = d.Digest.String()
	a := &artifact{kind: kindChart, ref: "oci://" + ref, repo: tag.Context(), desc: d.Descriptor, chart: ch,
		manifests: []rawBlob{{d.Digest.String(), d.Manifest}}}
	a.blobs = append([]v1.Descriptor{m.Config}, m.Layers...)
	return a, nil
}

func fetchImage(im *Image, o *options, ropts []remote.Option) (*artifact, error) {
	r, _ := ParseImageRef(im.Ref)
	src := r.Name()
	if o.imageSource != "" {
		host, path, _ := strings.Cut(strings.TrimPrefix(o.imageSource, "oci://"), "/")
		src = host + "/" + MirrorPath(path, r.Registry, r.Repository)
	}
	repo, err := name.NewRepository(src, nameOpts(o)...)
	if err != nil {
		return nil, err
	}
	a := &artifact{kind: kindImage, ref: im.Ref, repo: repo, image: im}
	seen := map[string]bool{}
	var walk func(dg string, top bool) error
	walk = func(dg string, top bool) error {
		if seen[dg] {
			return nil
		}
		seen[dg] = true
		d, err := remote.Get(repo.Digest(dg), ropts...)
		if err != nil {
			return err
		}
		if len(d.Manifest) > maxManifestSize {
			return fmt.Errorf("manifest %s is larger than %d bytes", dg, maxManifestSize)
		}
		if got := sha256Hex(d.Manifest); got != dg {
			return fmt.Errorf("manifest %s: the registry served %s", dg, got)
		}
		if top {
			a.desc = d.Descriptor
			im.MediaType = string(d.MediaType)
		}
		a.manifests = append(a.manifests, rawBlob{dg, d.Manifest})
		im.Size += int64(len(d.Manifest))
		if d.MediaType.IsIndex() {
			var ix v1.IndexManifest
			if err := json.Unmarshal(d.Manifest, &ix); err != nil {
				return fmt.Errorf("image index %s: %w", dg, err)
			}
			for _, c := range ix.Manifests {
				if top && len(o.platforms) > 0 && c.Platform != nil && !wantPlatform(o.platforms, c.Platform) {
					continue
				}
				if top && len(o.platforms) > 0 && c.Platform != nil {
					im.Platforms = append(im.Platforms, c.Platform.String())
				}
				if err := walk(c.Digest.String(), false); err != nil {
					return err
				}
			}
			return nil
		}
		var m v1.Manifest
		if err := json.Unmarshal(d.Manifest, &m); err != nil {
			return fmt.Errorf("manifest %s: %w", dg, err)
		}
		for _, b := range append([]v1.Descriptor{m.Config}, m.Layers...) {
			if len(b.URLs) > 0 {
				continue // a foreign layer: not distributable
			}
			a.blobs = append(a.blobs, b)
			im.Size += b.Size
		}
		return nil
	}
	if err := walk(r.Digest, true); err != nil {
		return nil, err
	}
	if len(o.platforms) > 0 && a.desc.MediaType.IsIndex() && len(im.Platforms) == 0 {
		return nil, fmt.Errorf("the image index has no image for %s", strings.Join(o.platforms, ", "))
	}
	sort.Strings(im.Platforms)
	return a, nil
}

func wantPlatform(want []string, p *v1.Platform) bool {
	for _, w := range want {
		wp, err := v1.ParsePlatform(w)
		if err == nil && p.Satisfies(*wp) {
			return true
		}
	}
	return false
}

// write writes the bundle to a temporary file beside out and renames it.
func write(ctx context.Context, out string, c *Contents, files map[string][]byte, arts []*artifact, o *options) error {
	contents, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	all := map[string][]byte{ContentsFile: append(contents, '\n')}
	for k, v := range files {
		all[k] = v
	}
	// The metadata image: an OCI image config with the bundle's labels,
	// and one layer per file.
	var layers []v1.Descriptor
	var meta []rawBlob
	var diffIDs []string
	for _, f := range slices.Sorted(maps.Keys(all)) {
		b := all[f]
		dg := sha256Hex(b)
		layers = append(layers, v1.Descriptor{MediaType: FileMediaType, Digest: mustHash(dg), Size: int64(len(b)), Annotations: map[string]string{AnnotationTitle: f}})
		meta = append(meta, rawBlob{dg, b})
		diffIDs = append(diffIDs, dg)
	}
	var pkgs []string
	for _, p := range c.Packages {
		pkgs = append(pkgs, fmt.Sprintf("%s %s build %d", p.Name, p.Version, p.Build))
	}
	created := c.Created.Format(time.RFC3339)
	config, _ := json.Marshal(map[string]any{
		"created": created, "architecture": "unknown", "os": "unknown",
		"config": map[string]any{"Labels": map[string]string{
			"org.opencontainers.image.created":     created,
			"org.opencontainers.image.description": "kbuild air-gap bundle: " + strings.Join(pkgs, ", "),
			"dev.kbuild.bundle.index":              c.Index,
		}},
		"rootfs": map[string]any{"type": "layers", "diff_ids": diffIDs},
	})
	metaManifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": ociManifest,
		"config": v1.Descriptor{MediaType: ociConfig, Digest: mustHash(sha256Hex(config)), Size: int64(len(config))},
		"layers": layers,
	})
	descs := []v1.Descriptor{{MediaType: ociManifest, Digest: mustHash(sha256Hex(metaManifest)), Size: int64(len(metaManifest)),
		Annotations: map[string]string{AnnotationKind: kindMetadata}}}
	for _, a := range arts {
		d := v1.Descriptor{MediaType: a.desc.MediaType, Digest: a.desc.Digest, Size: a.desc.Size,
			Annotations: map[string]string{AnnotationKind: a.kind, AnnotationRef: a.ref}}
		descs = append(descs, d)
	}
	top, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": ociIndex, "artifactType": ArtifactType, "manifests": descs,
		"annotations": map[string]string{"org.opencontainers.image.created": created},
	})
	indexJSON, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": ociIndex,
		"manifests": []v1.Descriptor{{MediaType: ociIndex, Digest: mustHash(sha256Hex(top)), Size: int64(len(top)),
			ArtifactType: ArtifactType, Annotations: map[string]string{AnnotationRefName: "bundle"}}},
	})

	tmp, err := atomicfile.Create(out, 0o644)
	if err != nil {
		return err
	}
	defer tmp.Abort()
	tw := tar.NewWriter(tmp)
	hdr := func(name string, size int64, dir bool) error {
		h := &tar.Header{Name: name, Size: size, Mode: 0o644, ModTime: c.Created, Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if dir {
			h.Mode, h.Typeflag = 0o755, tar.TypeDir
		}
		return tw.WriteHeader(h)
	}
	put := func(name string, b []byte) error {
		if err := hdr(name, int64(len(b)), false); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	seen := map[string]bool{}
	putBlob := func(dg string, b []byte) error {
		if seen[dg] {
			return nil
		}
		seen[dg] = true
		return put("blobs/sha256/"+strings.TrimPrefix(dg, "sha256:"), b)
	}
	if err := put("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := put("index.json", indexJSON); err != nil {
		return err
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := hdr(d, 0, true); err != nil {
			return err
		}
	}
	for _, b := range append([]rawBlob{{sha256Hex(top), top}, {sha256Hex(metaManifest), metaManifest}, {sha256Hex(config), config}}, meta...) {
		if err := putBlob(b.digest, b.data); err != nil {
			return err
		}
	}
	var total, done int64
	for _, a := range arts {
		for _, b := range a.blobs {
			total += b.Size
		}
	}
	ropts := o.remote(ctx)
	for _, a := range arts {
		o.progress(Progress{Artifact: a.ref, Done: done, Total: total})
		for _, m := range a.manifests {
			if err := putBlob(m.digest, m.data); err != nil {
				return err
			}
		}
		for _, b := range a.blobs {
			dg := b.Digest.String()
			if seen[dg] {
				done += b.Size
				continue
			}
			seen[dg] = true
			if b.Size > o.maxBlob {
				return fmt.Errorf("%s: blob %s is %d bytes, more than the %d allowed", a.ref, dg, b.Size, o.maxBlob)
			}
			if err := hdr("blobs/sha256/"+b.Digest.Hex, b.Size, false); err != nil {
				return err
			}
			if err := copyBlob(ctx, tw, a.repo.Digest(dg), b, ropts, func(n int64) {
				o.progress(Progress{Artifact: a.ref, Done: done + n, Total: total})
			}); err != nil {
				return fmt.Errorf("%s: blob %s: %w", a.ref, dg, err)
			}
			done += b.Size
		}
	}
	o.progress(Progress{Done: done, Total: total})
	if err := tw.Close(); err != nil {
		return err
	}
	return tmp.Commit()
}

// copyBlob streams the blob ref into w, checking its size and sha256.
func copyBlob(ctx context.Context, w io.Writer, ref name.Digest, d v1.Descriptor, ropts []remote.Option, report func(int64)) error {
	l, err := remote.Layer(ref, ropts...)
	if err != nil {
		return err
	}
	rc, err := l.Compressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h, &reporter{report: report}), io.LimitReader(rc, d.Size))
	if err != nil {
		return err
	}
	if n != d.Size {
		return fmt.Errorf("the registry sent %d bytes, the manifest says %d", n, d.Size)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != d.Digest.String() {
		return fmt.Errorf("the registry sent content with digest %s", got)
	}
	return nil
}

// reporter calls report with the bytes written so far, every 4 MiB.
type reporter struct {
	n, last int64
	report  func(int64)
}

func (r *reporter) Write(p []byte) (int, error) {
	r.n += int64(len(p))
	if r.n-r.last >= 4<<20 {
		r.last = r.n
		r.report(r.n)
	}
	return len(p), nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func mustHash(s string) v1.Hash {
	h, err := v1.NewHash(s)
	if err != nil {
		panic(err)
	}
	return h
}
