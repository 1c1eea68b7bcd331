package site

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
)

// TestSuiteBadges: the testing suite's page of kubevirt says which suites
// hold each build (its own suite from the index written, the others from
// WithSuites), links each other suite's page, and shows in which suites a
// withdrawn build is withdrawn.
func TestSuiteBadges(t *testing.T) {
	idx := testIndex(t)
	kv := idx.Packages["kubevirt"].Versions
	newest, old := kv[1], kv[0] // 1.9.0 build 4, 1.8.2 build 1
	gone := kv[2]               // 1.9.0 build 3, withdrawn here
	idx.Packages["kubevirt"].Versions = []index.IndexVersion{newest, old}
	idx.Withdrawn = []index.Withdrawal{{Package: "kubevirt", Version: gone.Version, Build: gone.Build, Digest: gone.Digest, Reason: "bad", Withdrawn: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}}

	unstable := &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{"kubevirt": {Versions: []index.IndexVersion{newest, old}}},
		Withdrawn: idx.Withdrawn}
	stable := &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{"kubevirt": {Versions: []index.IndexVersion{old}}}}
	s := &Suites{This: "testing", Names: []string{"unstable", "testing", "stable"}}
	s.Add("stable", stable)
	s.Add("unstable", unstable)
	// What the suites map says of This is ignored: the index written is
	// what this suite holds.
	s.Add("testing", &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{"kubevirt": {Versions: []index.IndexVersion{kv[2]}}}})

	dir := t.TempDir()
	if err := Write(dir, idx, WithSuites(s)); err != nil {
		t.Fatal(err)
	}
	page := readFile(t, dir, "packages/kubevirt.html")
	row := func(version string, build string) string {
		m := regexp.MustCompile(`<tr><td>(?:<a href="#[^"]+">)?` + regexp.QuoteMeta(version) + `(?:</a>)?[^\n]*?<td>` + build + `</td>[^\n]*</tr>`).FindString(page)
		if m == "" {
			t.Fatalf("no row for %s build %s in\n%s", version, build, page)
		}
		return m
	}
	for _, tc := range []struct {
		name, row string
		want      []string
		not       []string
	}{
		{"1.9.0 build 4: unstable and testing", row("1.9.0", "4"),
			[]string{`<span class="badge suite"><a href="../../unstable/packages/kubevirt.html#v1.9.0-4">unstable</a></span>`, `<span class="badge suite">testing</span>`},
			[]string{"../../stable/", ">stable<"}},
		{"1.8.2: every suite", row("1.8.2", "1"),
			[]string{">unstable</a>", `<span class="badge suite">testing</span>`, `<a href="../../stable/packages/kubevirt.html#v1.8.2-1">stable</a>`}, nil},
		{"1.9.0 build 3: withdrawn in unstable and testing", row("1.9.0", "3"),
			[]string{`<span class="badge suite withdrawn"><a href="../../unstable/packages/kubevirt.html">withdrawn in unstable</a></span>`, `<span class="badge suite withdrawn">withdrawn in testing</span>`},
			[]string{`badge suite">testing`, "../../stable/", "in stable"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, w := range tc.want {
				if !strings.Contains(tc.row, w) {
					t.Errorf("row lacks %s:\n%s", w, tc.row)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(tc.row, n) {
					t.Errorf("row has %s:\n%s", n, tc.row)
				}
			}
		})
	}
	// Without suites, pages have no Suites column.
	plain := t.TempDir()
	if err := Write(plain, idx); err != nil {
		t.Fatal(err)
	}
	if p := readFile(t, plain, "packages/kubevirt.html"); strings.Contains(p, "Suites") {
		t.Error("a page without suites shows a Suites column")
	}
}
