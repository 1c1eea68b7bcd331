package bundle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"

	"kbuild.dev/kbuild/bundle/nodeconfig"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// LocationsFile is the file Import writes beside the upstream index: where
// each chart and image now lives in the mirror.
const LocationsFile = "mirror.json"

// Locations is LocationsFile.
type Locations struct {
	// Mirror is oci://HOST/PATH.
	Mirror string `json:"mirror"`
	// Charts and Images map each original reference to the mirror's,
	// sorted by original reference.
	Charts []Location `json:"charts"`
	Images []Location `json:"images"`
}

// Location is one artifact's original and mirror reference.
type Location struct {
	Original string `json:"original"`
	Mirror   string `json:"mirror"`
	Digest   string `json:"digest"`
}

// Imported is the account of Import.
type Imported struct {
	Contents  *Contents
	Verified  *trust.Verified
	Locations Locations
	// Registries are the upstream registries of the images, sorted.
	Registries []string
	// NodeConfig are the node settings written into NodeConfigDir
	// (WithNodeConfig).
	NodeConfig    []string
	NodeConfigDir string
	// Resigned says the index with chart references at the mirror was
	// written and signed (WithResignKey).
	Resigned bool
}

// Import verifies the bundle file against trust (keys from the caller,
// never from the bundle): the index as a subscriber does, then every chart
// and image blob against the digests the signed index pins, and each
// provenance file against the keys trusted to sign the index (SBOMs and
// build info are not signed and travel as information). Only when all
// of it passed does it push the charts and images to mirror
// (oci://HOST/PATH), each under PATH/<original registry>/<original
// repository> (blobs the mirror has are skipped; blobs already pushed to
// another repository are mounted where the registry allows), and write
// site: the signed files unchanged, the SBOMs and provenance, and
// LocationsFile; then the node settings (WithNodeConfig). Only an error
// writing those returns the account with it.
func Import(ctx context.Context, file string, trust *trust.Trust, mirror, site string, opts ...Option) (*Imported, error) {
	o := makeOptions(opts)
	host, mpath, err := parseMirror(mirror)
	if err != nil {
		return nil, err
	}
	if site == "" {
		return nil, fmt.Errorf("import needs a site directory to write the index to")
	}
	b, err := open(file, o)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	state, err := siteState(site)
	if err != nil {
		return nil, err
	}
	vb, err := verifyBundle(b, trust, state, o)
	if err != nil {
		return nil, err
	}
	if err := b.checkAllBlobs(); err != nil {
		return nil, err
	}
	res := &Imported{Contents: &b.c, Verified: vb.v, Locations: Locations{Mirror: "oci://" + host + "/" + mpath}}
	p := &pusher{b: b, o: o, pushed: map[string]name.Repository{}}
	for _, bl := range append(vb.charts, vb.images...) {
		for _, n := range allNodes(bl.root) {
			for _, d := range n.blobs {
				p.total += d.Size
			}
		}
	}
	regs := map[string]bool{}
	// Platform-filtered indexes first: a registry that refuses them does
	// so before the rest is pushed.
	all := append(vb.charts, vb.images...)
	sort.SliceStable(all, func(i, j int) bool { return filtered(all[i]) && !filtered(all[j]) })
	for _, it := range all {
		repo, err := name.NewRepository(host+"/"+MirrorPath(mpath, it.registry, it.repo), nameOpts(o)...)
		if err != nil {
			return nil, fmt.Errorf("mirror repository for %s: %w", it.ref, err)
		}
		if err := p.push(ctx, repo, it); err != nil {
			return nil, fmt.Errorf("push %s to %s: %w", it.ref, repo, err)
		}
		loc := Location{Original: it.ref, Digest: it.root.desc.Digest.String()}
		if it.kind == kindChart {
			loc.Mirror = "oci://" + repo.String() + ":" + it.tag
			res.Locations.Charts = append(res.Locations.Charts, loc)
		} else {
			loc.Mirror = repo.String() + "@" + loc.Digest
			res.Locations.Images = append(res.Locations.Images, loc)
			regs[it.registry] = true
		}
	}
	if err := p.pushSigstore(ctx, func(it *pushable) (name.Repository, error) {
		return name.NewRepository(host+"/"+MirrorPath(mpath, it.registry, it.repo), nameOpts(o)...)
	}, vb.sigstore); err != nil {
		return nil, err
	}
	res.Registries = slices.Sorted(maps.Keys(regs))
	if err := writeSite(site, b.files, res.Locations); err != nil {
		return nil, err
	}
	if len(o.resign) > 0 {
		if err := resign(site, vb.v, b.c.Packages, host, mpath, o.resign); err != nil {
			return nil, err
		}
		res.Resigned = true
	}
	if o.nodeConfig != "" {
		res.NodeConfigDir = o.nodeConfig
		// The mirror holds everything now: the settings that send nodes
		// there come last, and a failure to write them keeps the account.
		if res.NodeConfig, err = nodeconfig.Write(o.nodeConfig, nodeconfig.Mirror{Host: host, Path: mpath, PlainHTTP: o.plainHTTP}, res.Registries); err != nil {
			return res, err
		}
	}
	return res, nil
}

// filtered reports whether it is an image index the bundle holds only
// some platforms of.
func filtered(it *pushable) bool {
	return it.root.desc.MediaType.IsIndex() && len(it.root.children) < it.root.named
}

// siteState is what the site accepted before: the generated time of its
// index.yaml and the version and digest of its root.yaml, so that an older
// bundle is refused as a rollback (nil for a new site). The files were
// verified when they were imported; they are only read here.
func siteState(site string) (*trust.State, error) {
	data, err := siteread.ReadFile(filepath.Join(site, sitelayout.IndexFile), index.MaxIndexSize)
	if errors.Is(err, siteread.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	x, err := index.ParseIndex(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; move it away to import into a new site", filepath.Join(site, sitelayout.IndexFile), err)
	}
	st := &trust.State{Generated: x.Generated}
	if rb, err := siteread.ReadFile(filepath.Join(site, sitelayout.RootFile), trust.MaxRootSize); err == nil {
		if r, err := trust.ParseRoot(rb); err == nil {
			if d, err := r.Digest(); err == nil {
				st.RootVersion, st.RootDigest = r.Signed.Version, d
			}
		}
	}
	return st, nil
}

func parseMirror(m string) (host, path string, err error) {
	rest, ok := strings.CutPrefix(m, "oci://")
	if !ok {
		return "", "", fmt.Errorf("mirror %q: want oci://HOST/PATH", m)
	}
	host, path, _ = strings.Cut(strings.TrimSuffix(rest, "/"), "/")
	if host == "" {
		return "", "", fmt.Errorf("mirror %q: no registry host", m)
	}
	return host, path, nil
}

func allNodes(n *node) []*node {
	out := []*node{n}
	for _, c := range n.children {
		out = append(out, allNodes(c)...)
	}
	return out
}

// pusher pushes verified artifacts from the extracted bundle.
type pusher struct {
	b           *opened
	o           *options
	pushed      map[string]name.Repository // blob -> a mirror repository holding it
	done, total int64
}

// jobs is how many blobs Import uploads at once.
const jobs = 4

func (p *pusher) push(ctx context.Context, repo name.Repository, it *pushable) error {
	ropts := p.o.remote(ctx)
	p.o.progress(Progress{Artifact: it.ref, Done: p.done, Total: p.total})
	// Every blob of the artifact, once, uploaded a few at a time.
	var blobs []v1.Descriptor
	seen := map[string]bool{}
	for _, n := range allNodes(it.root) {
		for _, d := range n.blobs {
			if !seen[d.Digest.String()] {
				seen[d.Digest.String()] = true
				blobs = append(blobs, d)
			}
		}
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(jobs)
	for _, d := range blobs {
		dg := d.Digest.String()
		var l v1.Layer = &bundleLayer{b: p.b, desc: d}
		if from, ok := p.pushed[dg]; ok && from.String() != repo.String() {
			l = &remote.MountableLayer{Layer: l, Reference: from.Digest(dg)}
		}
		g.Go(func() error {
			if err := remote.WriteLayer(repo, l, append(ropts, remote.WithContext(gctx))...); err != nil {
				return fmt.Errorf("blob %s: %w", dg, err)
			}
			mu.Lock()
			p.done += d.Size
			p.o.progress(Progress{Artifact: it.ref, Done: p.done, Total: p.total})
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, d := range blobs {
		if _, ok := p.pushed[d.Digest.String()]; !ok {
			p.pushed[d.Digest.String()] = repo
		}
	}
	// Manifests, children before the index that names them.
	var put func(n *node, top bool) error
	put = func(n *node, top bool) error {
		for _, c := range n.children {
			if err := put(c, false); err != nil {
				return err
			}
		}
		raw, err := io.ReadAll(p.b.blob(n.desc.Digest.String()))
		if err != nil {
			return err
		}
		var ref name.Reference = repo.Digest(n.desc.Digest.String())
		if top && it.tag != "" {
			ref = repo.Tag(it.tag)
		}
		err = remote.Put(ref, rawManifest{raw, n.desc.MediaType}, ropts...)
		var te *transport.Error
		if n.desc.MediaType.IsIndex() && errors.As(err, &te) && te.StatusCode == http.StatusBadRequest {
			if n.named > len(n.children) {
				return fmt.Errorf("the mirror refuses image index %s: the bundle holds %d of its %d images and this registry requires every image an index names (docker-registry does): %w: %w",
					n.desc.Digest, len(n.children), n.named, ErrPartialIndex, err)
			}
		}
		return err
	}
	return put(it.root, true)
}

// rawManifest is a manifest pushed byte for byte.
type rawManifest struct {
	data []byte
	mt   types.MediaType
}

func (m rawManifest) RawManifest() ([]byte, error)        { return m.data, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.mt, nil }

// bundleLayer is a verified blob, read from the bundle file.
type bundleLayer struct {
	b    *opened
	desc v1.Descriptor
}

var _ v1.Layer = (*bundleLayer)(nil)

func (l *bundleLayer) Digest() (v1.Hash, error) { return l.desc.Digest, nil }
func (l *bundleLayer) DiffID() (v1.Hash, error) { return l.desc.Digest, nil }
func (l *bundleLayer) Compressed() (io.ReadCloser, error) {
	return l.b.blob(l.desc.Digest.String()), nil
}
func (l *bundleLayer) Uncompressed() (io.ReadCloser, error) {
	return l.b.blob(l.desc.Digest.String()), nil
}
func (l *bundleLayer) Size() (int64, error)                { return l.desc.Size, nil }
func (l *bundleLayer) MediaType() (types.MediaType, error) { return l.desc.MediaType, nil }

// writeSite writes the signed files unchanged, the SBOMs and provenance,
// and the locations, each file atomically.
func writeSite(site string, files map[string][]byte, loc Locations) error {
	for _, f := range slices.Sorted(maps.Keys(files)) {
		if f == ContentsFile || strings.HasPrefix(f, sigstoreDir) {
			continue // the Sigstore bundles go to the mirror, beside their charts
		}
		p := filepath.Join(site, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(p, files[f], 0o644); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(loc, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(site, LocationsFile), append(b, '\n'), 0o644)
}
