package publish

import (
	"context"
	"time"

	"kbuild.dev/kbuild/sbom"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// Selection is the builds an SBOM or a Scan reads: those of a dist
// directory or a published index, verified first, and of them the
// packages asked for.
type Selection struct {
	// Source is a dist directory, or an index (a site, file or URL); with
	// AsIndex a directory is a site (siteread.LoadBuilds).
	Source  string
	AsIndex bool
	// Trust verifies an index; Timeout bounds its requests.
	Trust   *trust.Trust
	Timeout time.Duration
	// Packages are the PACKAGE[@VERSION] selected (none: every build).
	Packages []string
}

// load reads and verifies the builds (with their BuildInfo sidecars when
// buildInfo) and selects Packages. What it read is returned also when the
// selection fails, for its warnings; it is nil when reading failed.
func (s *Selection) load(ctx context.Context, buildInfo bool) (*siteread.Builds, []sbom.Build, error) {
	in, err := siteread.LoadBuilds(ctx, s.Source, s.Trust, siteread.BuildsOptions{BuildInfo: buildInfo, Timeout: s.Timeout, Index: s.AsIndex})
	if err != nil {
		return nil, nil, err
	}
	builds, err := in.Select(s.Packages)
	return in, builds, err
}
