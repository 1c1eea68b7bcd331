package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/sbom"
	"kbuild.dev/kbuild/sigbundle"
	"kbuild.dev/kbuild/site"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/spec"
)

// SBOMArtifactType is the artifactType (and layer media type) of a
// version's CycloneDX SBOM attached to each of its charts as an OCI
// referrer, beside its provenance.
const SBOMArtifactType = sbom.ReferrerArtifactType

// ErrOtherRegistry is wrapped by Publish's error when the site keeps old
// versions' files (a site-keep limit) of a chart that is not in the
// registry this publish pushes to: publish there, or keep every version.
var ErrOtherRegistry = errors.New("its files are kept only from the registry this publish pushes to")

// DefaultSiteKeep is how many versions of each package keep their SBOM
// and provenance files in the site (WithSiteKeep): the versions a package
// page shows in full.
const DefaultSiteKeep = site.MaxDetailed

// WithSiteKeep keeps the SBOM and provenance files of the newest n
// versions of each package in the site (default DefaultSiteKeep; 0 keeps
// every version's). When a publish changes a package, the files of its
// older versions are removed, after the new index is in place and only
// once the version's SBOM is confirmed attached to each of its charts in
// the registry; its build info, its index entry and its tombstone stay.
// Packages the publish does not change are left as they are.
func WithSiteKeep(n int) Option { return func(p *Publisher) { p.keep = n } }

// SBOMReferrer returns the OCI referrer of subject, a chart manifest,
// that carries the version SBOM data (artifactType SBOMArtifactType). Its
// created annotation is the SBOM's own metadata.timestamp, so the same
// SBOM always makes the same referrer manifest: attaching it again adds
// nothing to the chart's referrers.
func SBOMReferrer(subject v1.Descriptor, data []byte) (v1.Image, error) {
	var head struct {
		Metadata struct {
			Timestamp string `json:"timestamp"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("sbom: %w", err)
	}
	created, err := time.Parse(time.RFC3339, head.Metadata.Timestamp)
	if err != nil {
		return nil, fmt.Errorf("sbom: metadata.timestamp %q: expected an RFC 3339 time", head.Metadata.Timestamp)
	}
	return oci.ReferrerImage(subject, SBOMArtifactType, types.MediaType(SBOMArtifactType), data, created)
}

// Retain splits the versions of one package into those whose SBOM and
// provenance files the site keeps — the newest keep, or all of them when
// keep is 0 or less — and the older ones, each newest first. versions is
// not modified.
func Retain(versions []index.IndexVersion, keep int) (kept, older []index.IndexVersion) {
	vs := slices.Clone(versions)
	index.SortNewestFirst(vs)
	if keep <= 0 || len(vs) <= keep {
		return vs, nil
	}
	return vs[:keep:keep], vs[keep:]
}

// chartReferrerRefs returns oci://repository/name:tag of each chart s
// pins: the charts a version's SBOM and provenance are referrers of.
func chartReferrerRefs(s *spec.PackageSpec) []string {
	var out []string
	for _, va := range s.Variants {
		for _, c := range va.Components {
			if c.Chart != nil {
				out = append(out, strings.TrimSuffix(c.Chart.Repository, "/")+"/"+c.Chart.Name+":"+strings.ReplaceAll(c.Chart.Version, "+", "_"))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// planRemovals marks for removal (w.removing) the SBOM and provenance
// files of the versions beyond WithSiteKeep of each package this run
// built, once each version's SBOM is attached to every one of its charts
// in the target (ensureSBOMReferrers). A version for which that cannot be
// confirmed keeps its files, with a warning: nothing is removed that the
// registry does not hold.
func (p *Publisher) planRemovals(ctx context.Context, w *siteWriter, cat *catalogData, results []*builder.Result) error {
	if p.keep <= 0 {
		return nil
	}
	var names []string
	for _, r := range results {
		names = append(names, r.Name)
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		pkg := cat.idx.Packages[name]
		if pkg == nil {
			continue
		}
		_, older := Retain(pkg.Versions, p.keep)
		for _, v := range older {
			var have []string
			for _, f := range []string{sitelayout.SBOMFile(name, v.Version, v.Build), sitelayout.ProvenanceFile(name, v.Version, v.Build)} {
				if w.exists(f) {
					have = append(have, f)
				}
			}
			if len(have) == 0 {
				continue
			}
			if err := p.ensureSBOMReferrers(ctx, w, name, v); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				p.warnf("%s %s build %d: keeping its SBOM and provenance in the site, although it is older than the newest %d: %v", name, v.Version, v.Build, p.keep, err)
				continue
			}
			for _, f := range have {
				w.removing[f] = true
			}
		}
	}
	return nil
}

// ensureSBOMReferrers attaches the site's SBOM of name version build to
// each chart its build info names, in the target, unless the site has no
// SBOM of it: a version published before SBOMs were referrers gets them
// now, and for a later one the referrer is the same manifest (SBOMReferrer)
// and nothing changes. Each chart's manifest in the registry must be the
// one the build info names.
func (p *Publisher) ensureSBOMReferrers(ctx context.Context, w *siteWriter, name string, v index.IndexVersion) error {
	if p.target == nil {
		return errors.New("no registry to confirm its SBOM is attached to its charts")
	}
	info, err := w.buildInfo(name, v.Version, v.Build)
	if err != nil {
		return err
	}
	if info == nil {
		return fmt.Errorf("the site has no %s, which names its chart manifests", sitelayout.BuildInfoFile(name, v.Version, v.Build))
	}
	f := sitelayout.SBOMFile(name, v.Version, v.Build)
	if !w.exists(f) {
		return nil
	}
	data, err := siteread.ReadFile(w.path(f), siteread.MaxSidecarSize)
	if err != nil {
		return err
	}
	for _, c := range info.Charts {
		repo := name + "/" + c.Name
		tag := c.Ref[strings.LastIndexByte(c.Ref, ':')+1:]
		if got := p.target.Repository(repo) + "/" + c.Name + ":" + tag; got != c.Ref {
			return fmt.Errorf("chart %s is not in the registry this publish pushes to (it would be %s): %w", c.Ref, got, ErrOtherRegistry)
		}
		img, err := p.target.Image(ctx, repo, tag)
		if err != nil {
			return fmt.Errorf("chart %s: %w", c.Ref, err)
		}
		desc, err := partial.Descriptor(img)
		if err != nil {
			return fmt.Errorf("chart %s: %w", c.Ref, err)
		}
		if desc.Digest.String() != c.Manifest {
			return fmt.Errorf("chart %s: the registry holds manifest %s, but %s names %s", c.Ref, desc.Digest, sitelayout.BuildInfoFile(name, v.Version, v.Build), c.Manifest)
		}
		ref, err := SBOMReferrer(*desc, data)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if err := p.target.PushReferrer(ctx, repo, ref); err != nil {
			return fmt.Errorf("attach %s to chart %s: %w", f, c.Ref, err)
		}
	}
	return nil
}

// attachSBOM attaches the SBOM data of a version this run built to each
// of its charts as an OCI referrer.
func (p *Publisher) attachSBOM(ctx context.Context, r *builder.Result, data []byte) error {
	for _, c := range r.Charts {
		img, err := SBOMReferrer(c.Manifest, data)
		if err != nil {
			return err
		}
		if err := p.target.PushReferrer(ctx, c.Repo, img); err != nil {
			return fmt.Errorf("%s: attach SBOM to chart %s: %w", r.Name, c.Key, err)
		}
	}
	return p.attachCosign(ctx, r, sigbundle.CycloneDXPredicate, data)
}

// removeMarked removes the files planRemovals marked, once the new index
// is in place: nothing the site references then names them. A file that
// cannot be removed is reported and left; the next publish of its
// package removes it.
func (p *Publisher) removeMarked(w *siteWriter) {
	files := make([]string, 0, len(w.removing))
	for f := range w.removing {
		files = append(files, f)
	}
	if len(files) == 0 {
		return
	}
	slices.Sort(files)
	n := 0
	for _, f := range files {
		if err := os.Remove(w.path(f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			p.warnf("%v; it is no longer referenced, remove it by hand", err)
			continue
		}
		n++
	}
	fmt.Fprintf(p.stderr, "removed %d SBOM and provenance files of versions older than the newest %d of their package; the registry holds them as OCI referrers of their charts\n", n, p.keep)
}
