package main

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"kbuild.dev/kbuild/cmd/kbuild/options"
)

// TestJobs: -j 0, the default of every command, is one job per CPU; a
// negative -j is a usage error, in every command that has -j.
func TestJobs(t *testing.T) {
	for _, tc := range []struct {
		jobs, want int
		err        bool
	}{
		{0, runtime.NumCPU(), false},
		{1, 1, false},
		{7, 7, false},
		{-1, 0, true},
	} {
		got, err := (&options.JobsFlag{Jobs: tc.jobs}).Count()
		var ue *usageError
		if got != tc.want || (err != nil) != tc.err || err != nil && !errors.As(err, &ue) {
			t.Errorf("-j %d: count() = %d, %v; want %d (usage error: %v)", tc.jobs, got, err, tc.want, tc.err)
		}
	}
	for _, l := range leaves() {
		fs, _ := l.cmd.FlagSet(append([]string{"kbuild"}, l.path...))
		f := fs.Lookup("jobs")
		if f == nil {
			continue
		}
		if f.DefValue != "0" {
			t.Errorf("%s: -j defaults to %s, want 0 (one per CPU)", strings.Join(l.path, " "), f.DefValue)
		}
	}
	for _, args := range [][]string{
		{"validate", "-j", "-1", "--offline", "../../examples/smart-proxy"},
		{"scan", "../../sbom/testdata/dist", "-j", "-2"},
		{"build", "-j", "-1", "--offline", "-o", t.TempDir(), "../../examples/smart-proxy"},
	} {
		if r := runInProcess(args...); r.code != 2 || !strings.Contains(r.stderr, "give 1 or more, or 0 for one per CPU") {
			t.Errorf("kbuild %s: %s; want exit 2 and a usage error", strings.Join(args, " "), r)
		}
	}
}
