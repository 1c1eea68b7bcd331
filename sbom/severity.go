package sbom

import (
	"fmt"
	"strings"
)

// Severity is a vulnerability severity as Trivy rates it, ordered from
// SeverityUnknown to SeverityCritical.
type Severity int

// Severities, in increasing order.
const (
	SeverityUnknown Severity = iota
	SeverityLow
	SeverityMedium
	SeverityHigh
	SeverityCritical
)

var severityNames = [...]string{"UNKNOWN", "LOW", "MEDIUM", "HIGH", "CRITICAL"}

// String returns the severity in upper case, as Trivy writes it.
func (s Severity) String() string {
	if s < SeverityUnknown || s > SeverityCritical {
		return fmt.Sprintf("Severity(%d)", int(s))
	}
	return severityNames[s]
}

// ParseSeverity returns the severity named s (case-insensitive): CRITICAL,
// HIGH, MEDIUM, LOW or UNKNOWN.
func ParseSeverity(s string) (Severity, error) {
	for i, n := range severityNames {
		if strings.EqualFold(s, n) {
			return Severity(i), nil
		}
	}
	return 0, fmt.Errorf("severity %q: expected CRITICAL, HIGH, MEDIUM, LOW or UNKNOWN", s)
}

// severityOf reads a severity from a scanner's report: anything it does not
// know is UNKNOWN.
func severityOf(s string) Severity {
	sev, err := ParseSeverity(s)
	if err != nil {
		return SeverityUnknown
	}
	return sev
}
