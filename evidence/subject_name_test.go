package evidence

import "testing"

func TestSpecSubject(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		build         int
		want          string
	}{
		{"foreman", "3.15.0", 1, "pkg:kubepkg/foreman@3.15.0?build=1"},
		{"kubevirt", "1.9.0-rc.1", 12, "pkg:kubepkg/kubevirt@1.9.0-rc.1?build=12"},
		// '+' is percent-encoded in a purl version; build metadata would otherwise read as a space.
		{"cdi", "1.66.1+up", 2, "pkg:kubepkg/cdi@1.66.1%2Bup?build=2"},
	} {
		if got := SpecSubject(tc.name, tc.version, tc.build); got != tc.want {
			t.Errorf("SpecSubject(%q, %q, %d) = %s, want %s", tc.name, tc.version, tc.build, got, tc.want)
		}
	}
}
