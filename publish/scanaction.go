package publish

import (
	"bytes"
	"context"

	"kbuild.dev/kbuild/sbom"
)

// NoThreshold is a Scan's FailOn when no severity fails the scan.
const NoThreshold sbom.Severity = -1

// Scan is the action of kbuild scan: the images the builds of a dist
// directory or a published index (verified first) run, scanned for known
// vulnerabilities.
type Scan struct {
	Selection
	// Scanner returns the scanner; it is called once the builds are read,
	// so a source that cannot be read is reported first.
	Scanner func() (sbom.VulnScanner, error)
	// Jobs is how many images are scanned at once (sbom.WithJobs).
	Jobs int
	// JSON writes the report as JSON instead of a table.
	JSON bool
	// FailOn is the lowest severity that is a violation; NoThreshold for
	// none.
	FailOn sbom.Severity
}

// ScanResult is the report and what the scan warns about.
type ScanResult struct {
	// Warnings are those of verifying the index.
	Warnings []string
	// Unscanned are the images not scanned and why (Report.Unscanned).
	Unscanned []string
	// Report is the report, a table or JSON.
	Report []byte
	// Violations are the vulnerabilities at or above FailOn, none without
	// a threshold.
	Violations []sbom.Violation
}

// Run reads and verifies the builds, selects Packages, scans their images
// and writes the report. The result holds the warnings also when a later
// step fails; it is never nil.
func (a *Scan) Run(ctx context.Context) (*ScanResult, error) {
	in, builds, err := a.load(ctx, false)
	if in == nil {
		return &ScanResult{}, err
	}
	res := &ScanResult{Warnings: in.Warnings}
	if err != nil {
		return res, err
	}
	s, err := a.Scanner()
	if err != nil {
		return res, err
	}
	report, err := sbom.Scan(ctx, builds, s, sbom.WithJobs(a.Jobs))
	if err != nil {
		return res, err
	}
	res.Unscanned = report.Unscanned()
	var buf bytes.Buffer
	write := report.WriteText
	if a.JSON {
		write = report.WriteJSON
	}
	if err := write(&buf); err != nil {
		return res, err
	}
	res.Report = buf.Bytes()
	if a.FailOn != NoThreshold {
		res.Violations = report.Violations(a.FailOn)
	}
	return res, nil
}
