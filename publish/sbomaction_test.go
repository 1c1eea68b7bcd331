package publish

import (
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/sbom"
)

// TestSBOMAction: one build named gets its own document, anything else
// the repository's; the timestamp given is the document's; a package the
// source lacks is an error naming what it has.
func TestSBOMAction(t *testing.T) {
	const dist = "../sbom/testdata/dist"
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		packages []string
		want     []string
		err      string
	}{
		{"one build", []string{"kubevirt@1.9.0"}, []string{`"name":"kubevirt"`, `"timestamp":"2026-01-02T03:04:05Z"`}, ""},
		{"the repository", nil, []string{`"name":"` + dist + `"`, `"name":"cdi"`, `"name":"virt-stack"`}, ""},
		{"unknown package", []string{"nosuch"}, nil, `package "nosuch" is not in dist directory`},
		{"no source", nil, nil, "testdata/nosuch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := dist
			if tc.name == "no source" {
				src = "testdata/nosuch"
			}
			a := &SBOM{Selection: Selection{Source: src, Packages: tc.packages}, Timestamp: ts, Options: []sbom.Option{sbom.WithTool("kbuild", "test")}}
			res, err := a.Run(t.Context())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Run = %v, want an error containing %q", err, tc.err)
				}
				if res == nil {
					t.Errorf("Run returned a nil result with %v; want the warnings read so far", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(res.Data), w) {
					t.Errorf("the document lacks %s", w)
				}
			}
		})
	}
}
