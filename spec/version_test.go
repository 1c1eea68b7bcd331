package spec

import "testing"

// TestCanonicalVersion: one spelling of a version, the published one.
func TestCanonicalVersion(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"0.2.2", "0.2.2"},
		{"v0.2.2", "0.2.2"},
		{"v1.10.0-rc.1+meta", "1.10.0-rc.1+meta"},
		{"vv1.0.0", "vv1.0.0"}, // not a version: as it is
		{"v1.0", "v1.0"},       // not exact semver: as it is
		{"version", "version"}, // not a version
		{"v01.0.0", "v01.0.0"}, // leading zero: not exact semver
		{"", ""},
	} {
		if got := CanonicalVersion(tc.in); got != tc.want {
			t.Errorf("CanonicalVersion(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"v0.2.2", "0.2.2", true},
		{"0.2.2", "v0.2.2", true},
		{"v0.2.2", "v0.2.2", true},
		{"0.2.2", "0.2.3", false},
		{"1.0.0+a", "1.0.0+b", false},
		{"v1.0", "1.0", false},
	} {
		if got := SameVersion(tc.a, tc.b); got != tc.want {
			t.Errorf("SameVersion(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
