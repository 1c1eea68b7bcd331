package sigbundle

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// KeylessSigner signs a statement into a Sigstore bundle without a
// repository key: a short-lived certificate for an OIDC identity and a
// transparency-log entry (package keyless). Publish and build attach its
// bundles beside the key-signed ones.
type KeylessSigner interface {
	// Sign returns the bundle (JSON) of st.
	Sign(ctx context.Context, st *Statement) ([]byte, error)
	// Identity is the identity the certificates are issued for.
	Identity() Identity
}

// Identity is what a keyless signature is bound to and what a verifier
// pins: the OIDC issuer and the certificate's subject (for GitHub Actions,
// https://github.com/ + the token's job_workflow_ref: the workflow file
// that ran the job, at its ref), and for GitHub Actions the repository
// whose job signed. The subject of a job that calls a reusable workflow
// of another repository (kbuild's reusable-publish.yml) names that
// workflow, the same for every caller: only the repository (the
// certificate's GitHub workflow repository extension, which cosign's
// --certificate-github-workflow-repository checks) tells callers apart.
type Identity struct {
	Issuer     string `json:"issuer"`
	Subject    string `json:"subject"`
	Repository string `json:"repository,omitempty"`
}

// IssuerRegexp is the anchored regular expression matching exactly the
// issuer, as Flux's verify.matchOIDCIdentity takes it.
func (id Identity) IssuerRegexp() string { return "^" + regexp.QuoteMeta(id.Issuer) + "$" }

// SubjectRegexp is the anchored regular expression matching exactly the
// subject, as Flux's verify.matchOIDCIdentity takes it.
func (id Identity) SubjectRegexp() string { return "^" + regexp.QuoteMeta(id.Subject) + "$" }

// Validate checks that both fields are set and the issuer is a URL.
func (id Identity) Validate() error {
	if id.Subject == "" {
		return errors.New("keyless identity: subject is empty")
	}
	if !strings.HasPrefix(id.Issuer, "https://") && !strings.HasPrefix(id.Issuer, "http://") {
		return fmt.Errorf("keyless identity: issuer %q is not an http(s) URL", id.Issuer)
	}
	return nil
}
