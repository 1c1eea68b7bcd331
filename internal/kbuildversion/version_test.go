package kbuildversion

import (
	"bytes"
	"runtime/debug"
	"testing"
)

// TestRead: a release binary takes the stamped release and commit;
// `go install kbuild.dev/kbuild/cmd/kbuild@v0.3.0` leaves only Go's build
// info, whose module version and hash name it; a checkout build is
// devel-COMMIT, dirty when the tree was.
func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name     string
		bi       debug.BuildInfo
		rel, rev string
		want     string
	}{
		{"release binary", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "kbuild.dev/kbuild", Version: "(devel)"}},
			"v0.3.0", "0123456789abcdef0123456789abcdef01234567",
			"kbuild v0.3.0\ncommit: 0123456789abcdef0123456789abcdef01234567\ngo: go1.26.0\n"},
		{"go install at a version", debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Path: "kbuild.dev/kbuild", Version: "v0.3.0", Sum: "h1:abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ="}},
			"", "",
			"kbuild v0.3.0\ngo: go1.26.1\nmodule: kbuild.dev/kbuild h1:abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ=\n"},
		{"checkout with changes", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "kbuild.dev/kbuild", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "fedcba9876543210fedcba9876543210fedcba98"}, {Key: "vcs.modified", Value: "true"}}},
			"", "",
			"kbuild devel-fedcba987654-dirty\ncommit: fedcba9876543210fedcba9876543210fedcba98-dirty\ngo: go1.26.0\n"},
		{"nothing known", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", "", "kbuild devel\ngo: go1.99\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			Read(&tc.bi, tc.rel, tc.rev, "go1.99").Print(&b)
			if b.String() != tc.want {
				t.Errorf("Read printed\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}
