package sbom

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// VersionBOM names one published version and where its own BOM is.
type VersionBOM struct {
	Name, Version string
	Build         int
	// Digest is the version's spec digest, sha256:<hex>.
	Digest string
	// BOM is the URL or site-relative path of the version's BOM; empty
	// when the site does not hold it (see Referrers).
	BOM string
	// Referrers are the OCI references (oci://repository/name:tag) of the
	// version's charts, each of which has the version's BOM attached as
	// an OCI referrer of artifactType ReferrerArtifactType. They are the
	// BOM's references when BOM is empty.
	Referrers []string
}

// ReferrerArtifactType is the artifactType of a version's BOM attached to
// its charts as an OCI referrer.
const ReferrerArtifactType = "application/vnd.cyclonedx+json"

// referrerComment says what a chart reference of type bom means; a reader
// lists the referrers with, e.g., oras discover --artifact-type
// ReferrerArtifactType REGISTRY/REPOSITORY/CHART:TAG.
const referrerComment = "attached to this chart as an OCI referrer, artifactType " + ReferrerArtifactType

// bomRefs returns the external references to v's own BOM: the file, or
// else each chart it is an OCI referrer of.
func (v *VersionBOM) bomRefs() (*[]cdx.ExternalReference, error) {
	if v.BOM != "" {
		return &[]cdx.ExternalReference{{Type: cdx.ERTypeBOM, URL: v.BOM}}, nil
	}
	if len(v.Referrers) == 0 {
		return nil, fmt.Errorf("%s %s build %d: neither a BOM file nor a chart it is attached to", v.Name, v.Version, v.Build)
	}
	refs := make([]cdx.ExternalReference, len(v.Referrers))
	for i, r := range v.Referrers {
		refs[i] = cdx.ExternalReference{Type: cdx.ERTypeBOM, URL: r,
			Comment: referrerComment}
	}
	return &refs, nil
}

// ForRepositoryRefs returns the BOM of a repository named name that lists
// each version as a component with its spec digest and an external
// reference (type bom) to the version's own BOM — its file, or the charts
// it is an OCI referrer of (VersionBOM.Referrers) — instead of inlining the
// charts, images and sources of every version: for a repository of
// 100,000 versions it stays a few tens of MB. versions must be sorted and
// unique; the serial number is that of the same set of spec digests.
func ForRepositoryRefs(name string, versions []VersionBOM, opts ...Option) (*cdx.BOM, error) {
	if name == "" {
		return nil, errors.New("sbom: empty repository name; pass the index URL or path")
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	root := cdx.Component{
		BOMRef:     "repository:" + name,
		Type:       cdx.ComponentTypeData,
		Name:       name,
		Properties: &[]cdx.Property{{Name: PropRepositoryKind, Value: "kubepkg.dev/RepositoryIndex"}},
	}
	comps := make([]cdx.Component, 0, len(versions))
	digests := make([]string, 0, len(versions))
	refs := make([]string, 0, len(versions))
	for _, v := range versions {
		hashes, err := sha256Hash(v.Digest)
		if err != nil {
			return nil, fmt.Errorf("%s %s build %d: spec %w", v.Name, v.Version, v.Build, err)
		}
		ref := fmt.Sprintf("package:%s-%s-%d", v.Name, v.Version, v.Build) // as in the version's own BOM
		ext, err := v.bomRefs()
		if err != nil {
			return nil, err
		}
		comps = append(comps, cdx.Component{
			BOMRef: ref, Type: cdx.ComponentTypeApplication, Name: v.Name, Version: v.Version, Hashes: hashes,
			Properties:         props(PropBuild, strconv.Itoa(v.Build)),
			ExternalReferences: ext,
		})
		digests = append(digests, v.Digest)
		refs = append(refs, ref)
	}
	bom := &cdx.BOM{
		JSONSchema: SchemaURL, BOMFormat: cdx.BOMFormat, SpecVersion: cdx.SpecVersion1_6,
		SerialNumber: serialNumber(digests), Version: 1,
		Metadata: &cdx.Metadata{Component: &root},
	}
	if !cfg.timestamp.IsZero() {
		bom.Metadata.Timestamp = cfg.timestamp.UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	if tools := uniqueTools(cfg.tools); len(tools) > 0 {
		bom.Metadata.Tools = &cdx.ToolsChoice{Components: &tools}
	}
	if len(comps) > 0 {
		bom.Components = &comps
		bom.Dependencies = &[]cdx.Dependency{{Ref: root.BOMRef, Dependencies: &refs}}
	}
	return bom, nil
}
