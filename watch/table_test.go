package watch

import (
	"strings"
	"testing"
)

func TestWriteTableAndTally(t *testing.T) {
	reports := []Report{
		{Recipe: "recipes/a", Upstreams: []Status{{Name: PackageUpstream, Upstream: "oci://r/a", Current: "1.0", Newest: "1.1", Outdated: true}}},
		{Recipe: "recipes/b", Upstreams: []Status{{Name: PackageUpstream, Upstream: "oci://r/b", Current: "2.0"}, {Name: "helper", Upstream: "git", Error: "stalled"}}},
		{Recipe: "recipes/c", Error: "no watch.yaml", Unwatched: true},
		{Recipe: "recipes/d", Error: "bad recipe"},
	}
	var b strings.Builder
	if err := WriteTable(&b, reports); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{
		"recipes/a           oci://r/a  1.0      1.1     outdated",
		"recipes/b           oci://r/b  2.0      -       none allowed",
		"recipes/b (helper)  git        -        -       error",
		"recipes/c           -          -        -       unwatched",
		"recipes/d           -          -        -       error",
	} {
		if !strings.Contains(b.String(), row+"\n") {
			t.Errorf("WriteTable = \n%s\nwant a row %q", b.String(), row)
		}
	}
	errs, outdated := Tally(reports)
	if want := "recipes/b: stalled,recipes/d: bad recipe"; strings.Join(errs, ",") != want || outdated != 1 {
		t.Errorf("Tally = %q, %d; want %q, 1", errs, outdated, want)
	}
}
