package publish

import (
	"context"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"

	"kbuild.dev/kbuild/sbom"
)

// SBOM is the action of kbuild sbom: a CycloneDX document of the builds
// of a dist directory or a published index, verified first.
type SBOM struct {
	Selection
	// Timestamp is the document's time (zero: the index's generated time,
	// none for a dist directory).
	Timestamp time.Time
	// Options are sbom's other options (the tool, image contents).
	Options []sbom.Option
}

// SBOMResult is the document and what reading its source warned about.
type SBOMResult struct {
	// Data is the document, as sbom.Marshal writes it.
	Data []byte
	// Warnings are those of verifying the index.
	Warnings []string
}

// Run reads and verifies the builds, selects Packages, and writes one
// build's document when a single build is selected by name, else the
// repository's. The result holds the warnings also when a later step
// fails; it is never nil.
func (a *SBOM) Run(ctx context.Context) (*SBOMResult, error) {
	in, builds, err := a.load(ctx, true)
	if in == nil {
		return &SBOMResult{}, err
	}
	res := &SBOMResult{Warnings: in.Warnings}
	if err != nil {
		return res, err
	}
	ts := a.Timestamp
	if ts.IsZero() {
		ts = in.Generated
	}
	opts := append([]sbom.Option{sbom.WithTimestamp(ts)}, a.Options...)
	var bom *cdx.BOM
	if len(a.Packages) > 0 && len(builds) == 1 {
		bom, err = sbom.ForBuild(ctx, builds[0], opts...)
	} else {
		bom, err = sbom.ForRepository(ctx, in.Name, builds, opts...)
	}
	if err != nil {
		return res, err
	}
	res.Data, err = sbom.Marshal(bom)
	return res, err
}
