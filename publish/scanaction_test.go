package publish

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"kbuild.dev/kbuild/sbom"
)

// scanFake answers every image with the vulnerabilities of its table.
type scanFake map[string][]sbom.Vulnerability

func (f scanFake) ScanImage(ctx context.Context, ref string) ([]sbom.Vulnerability, error) {
	return f[ref], nil
}

func (f scanFake) Info(ctx context.Context) (sbom.ScannerInfo, error) {
	return sbom.ScannerInfo{Name: "fake"}, nil
}

// TestScanAction: the builds are read before the scanner is made, the
// packages named are the ones scanned, the report is a table or JSON, and
// only a threshold makes violations; the result is never nil.
func TestScanAction(t *testing.T) {
	const (
		dist = "../sbom/testdata/dist"
		api  = "quay.io/kubevirt/virt-api:v1.9.0@sha256:42341b1d52699f4bb87f3996151bafe2e3fe065e9146cc64a15959ddf7bf2c69"
	)
	high := scanFake{api: {{ID: "CVE-1", Severity: "HIGH", Package: "openssl", InstalledVersion: "1"}}}
	for _, tc := range []struct {
		name       string
		source     string
		packages   []string
		json       bool
		failOn     sbom.Severity
		scannerErr error
		report     []string // in the report
		violations []string
		err        string
	}{
		{name: "table, no threshold", packages: []string{"kubevirt@1.9.0"}, failOn: NoThreshold, report: []string{"kubevirt@1.9.0  " + api, "scanned with fake"}},
		{name: "json", packages: []string{"kubevirt@1.9.0"}, json: true, failOn: NoThreshold, report: []string{`"id": "CVE-1"`}},
		{name: "high fails on HIGH", packages: []string{"kubevirt@1.9.0"}, failOn: sbom.SeverityHigh,
			violations: []string{"kubevirt@1.9.0 runs " + api + " with 1 HIGH vulnerability"}},
		{name: "high passes CRITICAL", packages: []string{"kubevirt@1.9.0"}, failOn: sbom.SeverityCritical},
		{name: "unknown package", packages: []string{"nosuch"}, failOn: NoThreshold, err: `package "nosuch" is not in dist directory`},
		{name: "no trivy", failOn: NoThreshold, scannerErr: errors.New("trivy not found"), err: "trivy not found"},
		{name: "source before scanner", source: "testdata/nosuch", failOn: NoThreshold, scannerErr: errors.New("trivy not found"), err: "nosuch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Scan{Selection: Selection{Source: cmp.Or(tc.source, dist), Packages: tc.packages}, Jobs: 2, JSON: tc.json, FailOn: tc.failOn,
				Scanner: func() (sbom.VulnScanner, error) { return high, tc.scannerErr }}
			res, err := a.Run(t.Context())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Run = %v, want an error containing %q", err, tc.err)
				}
				if res == nil {
					t.Errorf("Run returned a nil result with %v; want the warnings read so far", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.report {
				if !strings.Contains(string(res.Report), w) {
					t.Errorf("the report lacks %s:\n%s", w, res.Report)
				}
			}
			if got, want := fmt.Sprint(res.Violations), fmt.Sprint(tc.violations); got != want {
				t.Errorf("Violations = %s, want %s", got, want)
			}
		})
	}
}
