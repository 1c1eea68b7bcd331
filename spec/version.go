package spec

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// ParseSemver parses an exact version such as 1.9.0 or 1.10.0-rc.1+meta
// (semver.org 2.0.0): no leading "v", no leading zeros, three numbers, at
// most 256 characters (semver.MaxVersionLen). It is Masterminds'
// StrictNewVersion, which kubepkg's client uses too, with an error that
// says what is expected.
func ParseSemver(s string) (*semver.Version, error) {
	v, err := semver.StrictNewVersion(s)
	if err != nil {
		return nil, fmt.Errorf("version %q is not an exact semantic version (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]): %w", s, err)
	}
	return v, nil
}

// ParseVersion parses a version as kubepkg reads one: exact semver after
// an optional leading "v".
func ParseVersion(s string) (*semver.Version, error) { return ParseSemver(strings.TrimPrefix(s, "v")) }

// ZeroVersion is 0.0.0, where an unparsable version sorts.
var ZeroVersion = semver.New(0, 0, 0, "", "")

// CanonicalVersion is the one spelling of a version, the one kbuild
// publishes: an exact semantic version without a leading "v" ("v0.2.2"
// is "0.2.2"). A string that is not a version, with or without the "v",
// is returned as it is.
func CanonicalVersion(s string) string {
	if t, ok := strings.CutPrefix(s, "v"); ok {
		if _, err := semver.StrictNewVersion(t); err == nil {
			return t
		}
	}
	return s
}

// SameVersion reports whether a and b spell one version: equal once each
// is in its CanonicalVersion spelling ("v0.2.2" and "0.2.2" are the same;
// "1.0.0+a" and "1.0.0+b" are not, since kbuild keeps them apart).
func SameVersion(a, b string) bool { return a == b || CanonicalVersion(a) == CanonicalVersion(b) }
