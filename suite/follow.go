package suite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/internal/ocilimit"
	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/site"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// A suite's followable repositories: how a Flux, Argo CD or Helm cluster
// follows a suite without trusting a tag that can change. Beside each
// chart repository REPO/NAME that a suite's index pins, the repository
// REPO/suites/SUITE/NAME holds exactly the builds the suite holds, under
// the same tags and with the same manifest digests (copied, their blobs
// mounted, with every referrer: the cosign signature and attestations,
// SBOM, provenance, evidence). A tag there is written once and never
// moved, and a build the suite withdraws is deleted from it; so a
// version range (Flux's ref.semver, Argo CD's targetRevision, helm
// --version) over the stable repository picks only promoted builds, and
// the newest of them. Follow keeps it so; promote, withdraw and the
// re-signing publish each call it after signing the suite's index.

// chartLayerMediaType is a Helm chart archive's layer media type.
const chartLayerMediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"

// MaxFollowReferrers is the most referrers of one chart Follow copies: a
// chart carries a few Sigstore bundles (signature, SBOM, provenance, one
// per signing key and re-signing) and its evidence, far fewer; a longer
// list (the list itself is capped at ocilimit.MaxManifest) is refused
// before any is read.
const MaxFollowReferrers = 1000

// maxFollowManifest caps a manifest Follow reads.
const maxFollowManifest = 4 << 20

// FollowRepository returns the repository (oci://…) in which suite's
// builds of chart name of chartRepository (an oci:// base) can be
// followed (site.FollowRepository).
func FollowRepository(chartRepository, suite, chart string) string {
	return site.FollowRepository(chartRepository, suite, chart)
}

// FollowOptions are how Follow reaches the registries.
type FollowOptions struct {
	// PlainHTTP reports whether a registry (HOST[:PORT]) is spoken to in
	// plain HTTP.
	PlainHTTP func(registry string) bool
	// Timeout is how long a registry may stay silent (0: a minute).
	Timeout time.Duration
	// Keychain authenticates to the registries (nil: the Docker config).
	Keychain authn.Keychain
}

// FollowResult is what Follow did.
type FollowResult struct {
	// Copied and Removed are the chart references (oci://REPO:TAG) copied
	// into and deleted from the followable repositories; Kept counts the
	// ones already in place.
	Copied, Removed []string
	Kept            int
}

// ErrFollow is wrapped by Follow's errors about what the registries hold.
var ErrFollow = errors.New("the suite's followable repository")

// Follow makes the followable repositories of x's charts (FollowRepository)
// hold exactly the builds x holds: each chart x pins is copied from its
// repository under its tag, after checking that its archive is the one x
// pins (never a tag moved since); a tag already there with another
// manifest is an error, never overwritten; a tag x does not pin (a
// withdrawn build, or one the suite no longer holds) is deleted. Every
// referrer of a chart (its Sigstore bundles above all, which cosign and
// Flux look up in the repository they pull from) is copied with it.
func Follow(ctx context.Context, x *index.RepositoryIndex, suite string, o FollowOptions) (*FollowResult, error) {
	if o.Keychain == nil {
		o.Keychain = authn.DefaultKeychain
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(o.Keychain),
		remote.WithTransport(ocilimit.Transport(netdeadline.Transport(remote.DefaultTransport, o.Timeout)))}
	type pin struct{ tag, archive string }
	want := map[string]map[string]pin{} // follow repository -> tag -> pin
	src := map[string]string{}          // follow repository -> chart repository
	for _, pkgName := range slices.Sorted(maps.Keys(x.Packages)) {
		for _, v := range x.Packages[pkgName].Versions {
			for _, va := range v.Spec.Variants {
				for _, c := range va.Components {
					if c.Chart == nil || !strings.HasPrefix(c.Chart.Repository, "oci://") {
						continue
					}
					from := strings.TrimSuffix(c.Chart.Repository, "/") + "/" + c.Chart.Name
					to := FollowRepository(c.Chart.Repository, suite, c.Chart.Name)
					if want[to] == nil {
						want[to] = map[string]pin{}
					}
					tag := strings.ReplaceAll(c.Chart.Version, "+", "_")
					want[to][tag] = pin{tag, c.Chart.Digest}
					src[to] = from
				}
			}
		}
	}
	res := &FollowResult{}
	for _, to := range slices.Sorted(maps.Keys(want)) {
		fromRepo, err := repository(src[to], o)
		if err != nil {
			return res, err
		}
		toRepo, err := repository(to, o)
		if err != nil {
			return res, err
		}
		have, err := listTags(toRepo, ropts)
		if err != nil {
			return res, fmt.Errorf("%w %s: listing its tags: %w", ErrFollow, to, err)
		}
		for _, tag := range slices.Sorted(maps.Keys(want[to])) {
			p := want[to][tag]
			copied, err := followOne(fromRepo, toRepo, p.tag, p.archive, slices.Contains(have, tag), ropts)
			if err != nil {
				return res, err
			}
			if copied {
				res.Copied = append(res.Copied, "oci://"+toRepo.Tag(tag).String())
			} else {
				res.Kept++
			}
		}
		for _, tag := range have {
			if _, ok := want[to][tag]; ok {
				continue
			}
			d, err := remote.Head(toRepo.Tag(tag), ropts...)
			if err != nil {
				return res, fmt.Errorf("%w %s: tag %s, which suite %s no longer holds: %w", ErrFollow, to, tag, suite, err)
			}
			if err := remote.Delete(toRepo.Digest(d.Digest.String()), ropts...); err != nil {
				return res, fmt.Errorf("%w %s: tag %s (%s) is not in suite %s, and the registry refused to delete it, so a version range can still select it; delete it by hand (docker-registry needs storage.delete.enabled; GHCR deletes package versions only through GitHub's API): %w",
					ErrFollow, to, tag, d.Digest, suite, err)
			}
			res.Removed = append(res.Removed, "oci://"+toRepo.Tag(tag).String())
		}
	}
	return res, nil
}

func repository(ref string, o FollowOptions) (name.Repository, error) {
	r := strings.TrimPrefix(ref, "oci://")
	var opts []name.Option
	if host, _, _ := strings.Cut(r, "/"); o.PlainHTTP != nil && o.PlainHTTP(host) {
		opts = append(opts, name.Insecure)
	}
	repo, err := name.NewRepository(r, opts...)
	if err != nil {
		return name.Repository{}, fmt.Errorf("%w: %s: %w", ErrFollow, ref, err)
	}
	return repo, nil
}

// listTags lists repo's tags; a repository that does not exist has none.
func listTags(repo name.Repository, ropts []remote.Option) ([]string, error) {
	tags, err := remote.List(repo, ropts...)
	var te *transport.Error
	if errors.As(err, &te) && te.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	// The referrers tag scheme's fallback tags (sha256-<hex>) are not
	// builds: they go with the manifests they list.
	out := tags[:0]
	for _, t := range tags {
		if !strings.HasPrefix(t, "sha256-") {
			out = append(out, t)
		}
	}
	return out, err
}

// followOne copies from:tag into to:tag with its referrers, unless to
// holds it already; it reports whether it copied the chart.
func followOne(from, to name.Repository, tag, archive string, present bool, ropts []remote.Option) (bool, error) {
	d, err := remote.Get(from.Tag(tag), ropts...)
	if err != nil {
		return false, fmt.Errorf("%w: chart %s: %w", ErrFollow, from.Tag(tag), err)
	}
	if len(d.Manifest) > maxFollowManifest {
		return false, fmt.Errorf("%w: chart %s: manifest of more than %d bytes", ErrFollow, from.Tag(tag), maxFollowManifest)
	}
	var m v1.Manifest
	if err := json.Unmarshal(d.Manifest, &m); err != nil {
		return false, fmt.Errorf("%w: chart %s: manifest: %w", ErrFollow, from.Tag(tag), err)
	}
	var got []string
	for _, l := range m.Layers {
		if l.MediaType == chartLayerMediaType {
			got = append(got, l.Digest.String())
		}
	}
	if len(got) != 1 || got[0] != archive {
		return false, fmt.Errorf("%w: chart %s has archive %s, but the suite's signed index pins %s; the tag was pushed again after the index was signed, so it is not copied",
			ErrFollow, from.Tag(tag), strings.Join(got, ", "), archive)
	}
	copied := false
	if present {
		cur, err := remote.Head(to.Tag(tag), ropts...)
		if err != nil {
			return false, fmt.Errorf("%w: %s: %w", ErrFollow, to.Tag(tag), err)
		}
		if cur.Digest != d.Digest {
			return false, fmt.Errorf("%w: %s holds manifest %s, but the suite's build is %s (%s); a followable tag is never moved: delete it by hand if it is wrong",
				ErrFollow, to.Tag(tag), cur.Digest, d.Digest, from.Tag(tag))
		}
	} else {
		img, err := d.Image()
		if err != nil {
			return false, fmt.Errorf("%w: chart %s: %w", ErrFollow, from.Tag(tag), err)
		}
		if err := remote.Write(to.Tag(tag), img, ropts...); err != nil {
			return false, fmt.Errorf("%w: copying %s to %s: %w", ErrFollow, from.Tag(tag), to.Tag(tag), err)
		}
		copied = true
	}
	return copied, copyReferrers(from.Digest(d.Digest.String()), to, ropts)
}

// copyReferrers copies every referrer of subject into to, where the
// subject has the same digest, unless to has it already.
func copyReferrers(subject name.Digest, to name.Repository, ropts []remote.Option) error {
	idx, err := remote.Referrers(subject, ropts...)
	if err != nil {
		return fmt.Errorf("%w: referrers of %s: %w", ErrFollow, subject, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return fmt.Errorf("%w: referrers of %s: %w", ErrFollow, subject, err)
	}
	if len(m.Manifests) > MaxFollowReferrers {
		return fmt.Errorf("%w: %s has %d referrers, more than the %d a chart's signatures, attestations and evidence need; nothing of them was copied: delete the extra referrers in %s (they were not pushed by kbuild)",
			ErrFollow, subject, len(m.Manifests), MaxFollowReferrers, subject.Context())
	}
	for _, r := range m.Manifests {
		dst := to.Digest(r.Digest.String())
		if _, err := remote.Head(dst, ropts...); err == nil {
			continue
		}
		img, err := remote.Image(subject.Context().Digest(r.Digest.String()), ropts...)
		if err != nil {
			return fmt.Errorf("%w: referrer %s of %s: %w", ErrFollow, r.Digest, subject, err)
		}
		if err := remote.Write(dst, img, ropts...); err != nil {
			return fmt.Errorf("%w: copying referrer %s of %s to %s: %w", ErrFollow, r.Digest, subject, to, err)
		}
	}
	return nil
}

// SuiteFollowed is what FollowSite did for one suite.
type SuiteFollowed struct {
	Suite string
	// NoIndex is set for a suite the site has no index for yet: it has
	// nothing to follow, and the catalog does not offer it.
	NoIndex bool
	*FollowResult
}

// FollowSite is the action of kbuild repo follow: Follow for every
// suite of the suites file whose index the site holds
// (SITE/<suite>/index.yaml), each read as a subscriber reads it. Publish,
// promote and withdraw each change one or more suites; running it after
// any of them (or the weekly re-signing) brings every followable
// repository back to its suite's index.
type FollowSite struct {
	// Site holds SITE/<suite>/index.yaml; SuitesFile is the suites file,
	// which must exist.
	Site, SuitesFile string
	// Trust verifies each suite's index.
	Trust *trust.Trust
	// PlainHTTP allows plain HTTP to loopback registries; Timeout is how
	// long a registry may stay silent (FollowOptions).
	PlainHTTP bool
	Timeout   time.Duration
	// Now is the time the indexes are checked at (default: the clock).
	Now time.Time
}

// Run reads the suites file and follows each suite in its order; a suite
// without an index yet is skipped. The result holds what was done also
// when a later suite fails.
func (a *FollowSite) Run(ctx context.Context) ([]SuiteFollowed, error) {
	c, found, err := Load(a.SuitesFile)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%s not found: a repository without suites has nothing to follow but its chart repositories, which a version range follows as they are", a.SuitesFile)
	}
	now := a.Now
	if now.IsZero() {
		now = time.Now()
	}
	o := FollowOptions{PlainHTTP: plainhttp.Policy{Loopback: a.PlainHTTP}.Allows, Timeout: a.Timeout}
	var out []SuiteFollowed
	for _, name := range c.Names() {
		p, err := siteread.ReadIndexAt(ctx, filepath.Join(a.Site, name), a.Trust, now)
		if errors.Is(err, siteread.ErrNotFound) {
			out = append(out, SuiteFollowed{Suite: name, NoIndex: true})
			continue
		}
		if err != nil {
			return out, fmt.Errorf("suite %s: %w", name, err)
		}
		res, err := Follow(ctx, p.Verified.Index, name, o)
		out = append(out, SuiteFollowed{Suite: name, FollowResult: res})
		if err != nil {
			return out, fmt.Errorf("suite %s: %w", name, err)
		}
	}
	return out, nil
}
