package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/sigbundle"
)

// attachCosign pushes, as an OCI referrer of each chart of r, one Sigstore
// bundle per signing key of the in-toto statement of predicateType with
// predicate (nil: the plain signature cosign sign writes), and one more
// signed keylessly with WithKeyless: what `cosign verify --key` (or
// --certificate-identity) and Flux's verify.provider: cosign check
// (packages sigbundle, keyless). A chart thus carries its signature and, as attestations,
// its provenance and SBOM.
func (p *Publisher) attachCosign(ctx context.Context, r *builder.Result, predicateType string, predicate json.RawMessage) error {
	for _, c := range r.Charts {
		digest := c.Manifest.Digest.String()
		st, err := sigbundle.NewStatement(chartRepository(r, digest, c.Repo), digest, predicateType, predicate)
		if err != nil {
			return fmt.Errorf("%s: chart %s: %w", r.Name, c.Key, err)
		}
		for _, s := range p.signers {
			data, err := sigbundle.Sign(st, s)
			if err != nil {
				return fmt.Errorf("%s: chart %s: %w", r.Name, c.Key, err)
			}
			img, err := oci.ReferrerImage(c.Manifest, sigbundle.MediaType, sigbundle.MediaType, data, p.epoch)
			if err != nil {
				return err
			}
			if err := p.target.PushReferrer(ctx, c.Repo, img); err != nil {
				return fmt.Errorf("%s: attach the cosign %s bundle to chart %s: %w", r.Name, predicateName(predicateType), c.Key, err)
			}
		}
		if p.keyless != nil {
			data, err := p.keyless.Sign(ctx, st)
			if err != nil {
				return fmt.Errorf("%s: chart %s: %w", r.Name, c.Key, err)
			}
			img, err := oci.ReferrerImage(c.Manifest, sigbundle.MediaType, sigbundle.MediaType, data, p.epoch)
			if err != nil {
				return err
			}
			if err := p.target.PushReferrer(ctx, c.Repo, img); err != nil {
				return fmt.Errorf("%s: attach the keyless cosign %s bundle to chart %s: %w", r.Name, predicateName(predicateType), c.Key, err)
			}
		}
	}
	return nil
}

// attachCosignProvenance attaches the signature and the provenance
// predicate of the build's statement to each of its charts.
func (p *Publisher) attachCosignProvenance(ctx context.Context, r *builder.Result, predicate any) error {
	if err := p.attachCosign(ctx, r, sigbundle.SignPredicate, nil); err != nil {
		return err
	}
	data, err := json.Marshal(predicate)
	if err != nil {
		return err
	}
	return p.attachCosign(ctx, r, sigbundle.SLSAProvenanceV1, data)
}

// chartRepository is the repository (registry/path, no scheme or tag) of
// the chart of r whose manifest is digest, as its build info records it;
// repo when the build info does not name it.
func chartRepository(r *builder.Result, digest, repo string) string {
	for _, c := range r.Info.Charts {
		if c.Manifest == digest {
			ref := strings.TrimPrefix(c.Ref, "oci://")
			if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
				ref = ref[:i]
			}
			return ref
		}
	}
	return repo
}

func predicateName(t string) string {
	switch t {
	case sigbundle.SignPredicate:
		return "signature"
	case sigbundle.CycloneDXPredicate:
		return "SBOM"
	case sigbundle.SLSAProvenanceV1:
		return "provenance"
	}
	return t
}
