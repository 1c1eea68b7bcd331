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
