package provenance

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"kbuild.dev/kbuild/internal/fault"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// Media and predicate types of build provenance.
const (
	InTotoPayloadType     = "application/vnd.in-toto+json"
	InTotoStatementType   = "https://in-toto.io/Statement/v1"
	SLSAProvenanceType    = "https://slsa.dev/provenance/v1"
	DSSEEnvelopeMediaType = "application/vnd.dsse.envelope.v1+json"
	BuildType             = "https://kbuild.dev/recipe/v1"
	ArtifactType          = InTotoPayloadType
)

// Statement is an in-toto v1 Statement with an SLSA v1 provenance predicate.
type Statement struct {
	Type          string        `json:"_type"`
	Subject       []Subject     `json:"subject"`
	PredicateType string        `json:"predicateType"`
	Predicate     SLSAPredicate `json:"predicate"`
}

// Subject is an artifact the statement is about.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// SLSAPredicate is the SLSA v1 provenance predicate.
type SLSAPredicate struct {
	BuildDefinition BuildDefinition `json:"buildDefinition"`
	RunDetails      RunDetails      `json:"runDetails"`
}

// BuildDefinition says what was built from what.
type BuildDefinition struct {
	BuildType            string               `json:"buildType"`
	ExternalParameters   ExternalParameters   `json:"externalParameters"`
	InternalParameters   map[string]string    `json:"internalParameters,omitempty"`
	ResolvedDependencies []ResourceDescriptor `json:"resolvedDependencies,omitempty"`
}

// ExternalParameters are the inputs a maintainer controls: the recipe.
type ExternalParameters struct {
	Recipe  ResourceDescriptor `json:"recipe"`
	Package string             `json:"package"`
	Version string             `json:"version"`
	Build   int                `json:"build"`
}

// ResourceDescriptor names an input by URI and digest.
type ResourceDescriptor struct {
	Name   string            `json:"name,omitempty"`
	URI    string            `json:"uri,omitempty"`
	Digest map[string]string `json:"digest,omitempty"`
}

// RunDetails says who built it.
type RunDetails struct {
	Builder  Builder      `json:"builder"`
	Metadata *RunMetadata `json:"metadata,omitempty"`
}

// Builder identifies the build platform.
type Builder struct {
	ID      string            `json:"id"`
	Version map[string]string `json:"version,omitempty"`
}

// RunMetadata identifies one run.
type RunMetadata struct {
	InvocationID string `json:"invocationId,omitempty"`
}

// BuilderIdentity returns the builder id and invocation id: the GitHub
// workflow and run when GITHUB_ACTIONS is set, else a local builder.
func BuilderIdentity(getenv func(string) string) (id, invocation string) {
	if getenv("GITHUB_ACTIONS") == "true" {
		server := getenv("GITHUB_SERVER_URL")
		if server == "" {
			server = "https://github.com"
		}
		if ref := getenv("GITHUB_WORKFLOW_REF"); ref != "" {
			id = server + "/" + ref
		} else {
			id = server + "/" + getenv("GITHUB_REPOSITORY") + "/.github/workflows/" + getenv("GITHUB_WORKFLOW")
		}
		if run := getenv("GITHUB_RUN_ID"); run != "" {
			invocation = server + "/" + getenv("GITHUB_REPOSITORY") + "/actions/runs/" + run + "/attempts/" + getenv("GITHUB_RUN_ATTEMPT")
		}
		return id, invocation
	}
	return "https://kbuild.dev/builders/local", ""
}

// New returns the statement for the charts of one published build:
// its subjects are every chart archive and OCI manifest. Nothing in it
// depends on the clock: the epoch is recorded as a parameter.
func New(info *spec.BuildInfo, builderID, invocation string, epoch time.Time) Statement {
	s := Statement{Type: InTotoStatementType, PredicateType: SLSAProvenanceType}
	for _, c := range info.Charts {
		s.Subject = append(s.Subject,
			Subject{Name: c.Ref, Digest: map[string]string{"sha256": hexOf(c.Digest)}},
			Subject{Name: c.Ref + "@" + c.Manifest, Digest: map[string]string{"sha256": hexOf(c.Manifest)}})
	}
	recipe := ResourceDescriptor{Name: info.Recipe, Digest: map[string]string{"sha256": hexOf(info.RecipeDigest)}}
	if info.Commit != "" {
		recipe.Digest["gitCommit"] = info.Commit
	}
	s.Predicate.BuildDefinition = BuildDefinition{
		BuildType: BuildType,
		ExternalParameters: ExternalParameters{
			Recipe: recipe, Package: info.Package, Version: info.Version, Build: info.Build,
		},
		InternalParameters: map[string]string{"SOURCE_DATE_EPOCH": strconv.FormatInt(epoch.Unix(), 10), "builder": info.Builder},
	}
	for _, src := range info.Sources {
		s.Predicate.BuildDefinition.ResolvedDependencies = append(s.Predicate.BuildDefinition.ResolvedDependencies, ResourceDescriptor{
			Name: src.Name + " (" + src.Kind + ")", URI: src.Origin, Digest: map[string]string{"sha256": hexOf(src.Digest)},
		})
	}
	s.Predicate.RunDetails.Builder = Builder{ID: builderID, Version: map[string]string{"kbuild": info.Builder}}
	if invocation != "" {
		s.Predicate.RunDetails.Metadata = &RunMetadata{InvocationID: invocation}
	}
	return s
}

func hexOf(digest string) string { return strings.TrimPrefix(digest, "sha256:") }

// Sign encodes s as compact JSON and signs it as a DSSE
// envelope, written as compact JSON with a final newline. Only the
// payload is signed (its PAE), so the envelope's layout is free; a site
// holds one per version.
func Sign(s Statement, signer trust.Signer) ([]byte, error) {
	payload, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	env, err := trust.SignEnvelope(InTotoPayloadType, payload, signer)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, env); err != nil {
		return nil, fmt.Errorf("compacting the DSSE envelope: %w", err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// ErrVerify is wrapped by every verification failure of Verify.
var ErrVerify = fault.New(fault.Verification, "provenance verification failed")

// Verify checks that envelope is a DSSE envelope of an in-toto
// statement signed by pub (PKIX DER of an ed25519 key) whose subjects
// include the chart archive digest. It returns the statement.
func Verify(envelope []byte, pubDER []byte, archiveDigest string) (*Statement, error) {
	k, err := x509.ParsePKIXPublicKey(pubDER)
	if err != nil {
		return nil, err
	}
	ek, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("public key is %T, want ed25519", k)
	}
	pub, err := trust.NewPublicKey(ek)
	if err != nil {
		return nil, err
	}
	payload, signedBy, err := trust.OpenEnvelope(envelope, InTotoPayloadType, []trust.Verifier{pub})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrVerify, err)
	}
	if len(signedBy) == 0 {
		var env trust.Envelope
		_ = json.Unmarshal(envelope, &env)
		return nil, fmt.Errorf("%w: no valid signature by key %s (the envelope lists %d signatures); it was signed by another key or changed after signing", ErrVerify, pub.KeyID(), len(env.Signatures))
	}
	var st Statement
	if err := json.Unmarshal(payload, &st); err != nil {
		return nil, fmt.Errorf("%w: payload is not an in-toto statement: %v", ErrVerify, err)
	}
	if st.Type != InTotoStatementType || st.PredicateType != SLSAProvenanceType {
		return nil, fmt.Errorf("%w: statement type %q predicate %q, want %q and %q", ErrVerify, st.Type, st.PredicateType, InTotoStatementType, SLSAProvenanceType)
	}
	want := hexOf(archiveDigest)
	var have []string
	for _, s := range st.Subject {
		if s.Digest["sha256"] == want {
			return &st, nil
		}
		have = append(have, s.Name+"@sha256:"+s.Digest["sha256"])
	}
	return nil, fmt.Errorf("%w: the chart archive sha256:%s is not a subject of the statement (subjects: %s)", ErrVerify, want, strings.Join(have, ", "))
}

// VerifyArchive checks that envelope is provenance of the chart archive
// signed by one of keys (as Verify, for each key in turn). It returns the
// statement and the key that signed it; when none did, an error that
// names each key and why.
func VerifyArchive(archive, envelope []byte, keys []*trust.PublicKey) (*Statement, *trust.PublicKey, error) {
	if len(keys) == 0 {
		return nil, nil, fmt.Errorf("%w: no key to verify the provenance with", ErrVerify)
	}
	sum := sha256.Sum256(archive)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	var errs []error
	for _, k := range keys {
		der, err := x509.MarshalPKIXPublicKey(k.Key())
		if err != nil {
			return nil, nil, err
		}
		st, err := Verify(envelope, der, digest)
		if err == nil {
			return st, k, nil
		}
		errs = append(errs, fmt.Errorf("key %s: %w", k.KeyID(), err))
	}
	return nil, nil, errors.Join(errs...)
}

// WriteText writes the statement verified for archive for a person: the
// package, version and build, the key that signed it, the recipe, each
// source and the builder.
func (st *Statement) WriteText(w io.Writer, archive string, key *trust.PublicKey) error {
	p := st.Predicate.BuildDefinition.ExternalParameters
	fmt.Fprintf(w, "%s: verified: %s %s build %d, signed by %s\n", archive, p.Package, p.Version, p.Build, key.KeyID())
	rec := p.Recipe.Name
	if c := p.Recipe.Digest["gitCommit"]; c != "" {
		rec += " at commit " + c
	}
	fmt.Fprintf(w, "  recipe %s sha256:%s\n", rec, p.Recipe.Digest["sha256"])
	for _, d := range st.Predicate.BuildDefinition.ResolvedDependencies {
		fmt.Fprintf(w, "  source %s %s sha256:%s\n", d.Name, d.URI, d.Digest["sha256"])
	}
	_, err := fmt.Fprintf(w, "  builder %s\n", strings.TrimSpace(st.Predicate.RunDetails.Builder.ID))
	return err
}
