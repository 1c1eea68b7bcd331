package index_test

import (
	"testing"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// TestOneVersionSpelling: Find, FindWithdrawn and SetMembers compare
// versions as versions, so a "v" prefix names the published version.
func TestOneVersionSpelling(t *testing.T) {
	x := &index.RepositoryIndex{
		Packages:  map[string]*index.IndexPackage{"virt-template": {Versions: []index.IndexVersion{{Version: "0.2.2", Build: 1}}}},
		Withdrawn: []index.Withdrawal{{Package: "virt-template", Version: "0.2.1", Build: 1}},
	}
	for _, tc := range []struct {
		version   string
		build     int
		found     bool
		withdrawn bool
	}{
		{"0.2.2", 1, true, false},
		{"v0.2.2", 1, true, false},
		{"v0.2.2", 2, false, false},
		{"0.2.3", 1, false, false},
		{"v0.2.1", 1, false, true},
		{"0.2.1", 1, false, true},
	} {
		if got := x.Find("virt-template", tc.version, tc.build) != nil; got != tc.found {
			t.Errorf("Find(virt-template, %q, %d) found %v, want %v", tc.version, tc.build, got, tc.found)
		}
		if got := x.FindWithdrawn("virt-template", tc.version, tc.build) != nil; got != tc.withdrawn {
			t.Errorf("FindWithdrawn(virt-template, %q, %d) found %v, want %v", tc.version, tc.build, got, tc.withdrawn)
		}
	}
	for _, pin := range []string{"=0.2.2+build.1", "=v0.2.2+build.1"} {
		s := spec.PackageSpec{Variants: []spec.Variant{{Name: "default", Requires: []spec.Requirement{{Package: "virt-template", Version: pin}}}}}
		ms, isSet, err := index.SetMembers(&s)
		if err != nil || !isSet || len(ms) != 1 || ms[0].Version != "0.2.2" || ms[0].Build != 1 {
			t.Errorf("SetMembers(%s) = %v, %v, %v; want virt-template 0.2.2 build 1", pin, ms, isSet, err)
		}
	}
}
