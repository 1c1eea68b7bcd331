package publish

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/internal/ocilimit"
	"kbuild.dev/kbuild/provenance"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/spec"
)

// EvidenceArtifactType is the artifactType of test evidence attached to a
// chart as an OCI referrer: an in-toto statement, as for provenance; its
// predicateType (test-result) tells them apart.
const EvidenceArtifactType = provenance.ArtifactType

// AttachEvidence attaches the signed evidence envelope to the chart
// manifest of every chart of versions, as an OCI referrer, and returns
// the references it attached to. The manifests are the ones the site's
// build info names for each version; a chart whose archive digest is not
// the one pub's index pins, or whose manifest the registry does not have,
// is an error. A registry that stays silent for timeout (to connect, to
// start answering, or in a transfer) fails the request (0:
// oci.DefaultRegistryTimeout).
func AttachEvidence(ctx context.Context, pub *siteread.Published, versions []VersionRef, envelope []byte, created time.Time, plainHTTP bool, timeout time.Duration) ([]string, error) {
	var out []string
	for _, v := range versions {
		e := pub.Verified.Index.Find(v.Package, v.Version, v.Build)
		if e == nil {
			return nil, fmt.Errorf("%s is not in the index", v)
		}
		pinned := map[string]bool{}
		for _, va := range e.Spec.Variants {
			for _, c := range va.Components {
				if c.Chart != nil {
					pinned[c.Chart.Digest] = true
				}
			}
		}
		data, found, err := pub.BuildInfo(ctx, v.Package, v.Version, v.Build)
		if err != nil {
			return nil, err
		}
		if !found {
			if len(pinned) == 0 {
				continue // a meta package: no chart to attach to
			}
			return nil, fmt.Errorf("%s: the site has no %s, which names the chart manifests to attach evidence to", v, sitelayout.BuildInfoFile(v.Package, v.Version, v.Build))
		}
		var info spec.BuildInfo
		if err := dist.Unmarshal(data, &info); err != nil {
			return nil, fmt.Errorf("%s: %w", sitelayout.BuildInfoFile(v.Package, v.Version, v.Build), err)
		}
		for _, c := range info.Charts {
			if !pinned[c.Digest] {
				return nil, fmt.Errorf("%s: chart %s has archive %s in %s, which the index does not pin", v, c.Ref, c.Digest, sitelayout.BuildInfoFile(v.Package, v.Version, v.Build))
			}
			ref, err := attachOne(ctx, c, envelope, created, plainHTTP, timeout)
			if err != nil {
				return nil, fmt.Errorf("%s: attach evidence to chart %s: %w", v, c.Ref, err)
			}
			out = append(out, ref)
		}
	}
	return out, nil
}

// attachOne pushes the envelope as a referrer of chart c's manifest.
func attachOne(ctx context.Context, c spec.BuiltChart, envelope []byte, created time.Time, plainHTTP bool, timeout time.Duration) (string, error) {
	if timeout <= 0 {
		timeout = oci.DefaultRegistryTimeout
	}
	r, err := spec.ParseImageRef(strings.TrimPrefix(c.Ref, "oci://"))
	if err != nil {
		return "", fmt.Errorf("built chart %s: %w", c.Name, err)
	}
	opts := []name.Option{name.StrictValidation}
	if plainHTTP {
		opts = append(opts, name.Insecure)
	}
	subject, err := name.NewDigest(r.Name()+"@"+c.Manifest, opts...)
	if err != nil {
		return "", err
	}
	rt := ocilimit.Transport(netdeadline.Transport(remote.DefaultTransport, timeout))
	desc, err := remote.Head(subject, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain), remote.WithTransport(rt))
	if err != nil {
		return "", err
	}
	img, err := oci.ReferrerImage(*desc, EvidenceArtifactType, provenance.DSSEEnvelopeMediaType, envelope, created)
	if err != nil {
		return "", err
	}
	t, err := oci.NewRegistryTarget("oci://"+path.Dir(r.Name()), plainHTTP)
	if err != nil {
		return "", err
	}
	t.SetTimeout(timeout)
	if err := t.PushReferrer(ctx, path.Base(r.Repository), img); err != nil {
		return "", err
	}
	return subject.String(), nil
}
