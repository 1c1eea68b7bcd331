package evidence

import "testing"

// TestParseTargetSpelling: attest and promote name a version in its
// published spelling, whichever way it was typed.
func TestParseTargetSpelling(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want Target
	}{
		{"foreman@3.15.0", Target{"foreman", "3.15.0", 2}},
		{"foreman@v3.15.0", Target{"foreman", "3.15.0", 2}},
		{"foreman@v3.15.0-rc.1", Target{"foreman", "3.15.0-rc.1", 2}},
	} {
		got, err := ParseTarget(tc.arg, 2)
		if err != nil || got != tc.want {
			t.Errorf("ParseTarget(%q, 2) = %v, %v; want %v", tc.arg, got, err, tc.want)
		}
	}
}
