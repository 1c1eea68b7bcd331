package watch

import (
	"os"
	"strings"
	"testing"

	"kbuild.dev/kbuild/recipe"
)

func TestParseGood(t *testing.T) {
	data, err := os.ReadFile("testdata/rules/good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse("good.yaml", data)
	if err != nil {
		t.Fatalf("Parse = %v, want nil", err)
	}
	if r.Platform != DefaultPlatform || r.Upstream.GitHub.Repository != "kubevirt/kubevirt" || r.Also["template"].Git == nil || len(r.Images) != 2 {
		t.Errorf("Parse = %+v", r)
	}
}

// TestParseBad: each broken rule is refused naming its line and field.
func TestParseBad(t *testing.T) {
	const head = "apiVersion: kbuild.dev/v1alpha1\nkind: Watch\n"
	for _, tc := range []struct{ name, text, want string }{
		{"unknown field", head + "upstream:\n  git: {url: x}\n  flavour: 1\n", "line 5: field flavour not found"},
		{"duplicate key", head + "upstream:\n  git: {url: x}\n  git: {url: y}\n", `line 5: mapping key "git" already defined at line 4`},
		{"wrong kind", "apiVersion: kbuild.dev/v1alpha1\nkind: Recipe\nupstream: {git: {url: x}}\n", `line 2: kind: expected Watch, got "Recipe"`},
		{"two upstream kinds", head + "upstream:\n  git: {url: x}\n  oci: {repository: y}\n", "line 3: upstream: set exactly one of helm, oci, git, github and listing (got 2)"},
		{"no upstream", head + "sources: {}\n", "upstream: set exactly one"},
		{"bad constraint", head + "upstream:\n  git: {url: x}\n  versions:\n    constraint: \"~~1\"\n", "line 6: upstream.versions.constraint:"},
		{"bad pattern", head + "upstream:\n  git: {url: x}\n  versions: {pattern: \"(\"}\n", "line 5: upstream.versions.pattern: error parsing regexp"},
		{"prerelease word", head + "upstream:\n  git: {url: x}\n  versions: {prerelease: yes-please}\n", `upstream.versions.prerelease: expected exclude or include, got "yes-please"`},
		{"unknown placeholder", head + "upstream: {git: {url: x}}\nsources:\n  op: {url: \"https://x/{ver}/a\"}\n", "line 5: sources.op.url: unknown placeholder {ver}"},
		{"asset without github", head + "upstream: {git: {url: x}}\nsources:\n  op: {asset: a.yaml}\n", "sources.op.asset: an asset needs a github upstream"},
		{"image from nowhere", head + "upstream: {git: {url: x}}\nimages:\n  - {repository: \"q/*\", tag: \"{version}\", from: nope}\n", `images.0.from: no upstream "nope" under also:`},
		{"bad platform", head + "upstream: {git: {url: x}}\nplatform: amd64\n", `line 4: platform: expected OS/ARCH`},
		{"github repository", head + "upstream: {github: {repository: kubevirt}}\n", `upstream.github.repository: expected OWNER/NAME, got "kubevirt"`},
		{"listing not http", head + "upstream: {listing: {url: \"ftp://x/\"}}\n", `upstream.listing.url: expected an http(s) URL`},
		{"two rules a source", head + "upstream: {helm: {repository: \"https://c\", chart: c}}\nsources:\n  c: {chart: true, url: \"https://x\"}\n", "sources.c: set exactly one of url, asset, gitTag and chart (got 2)"},
		{"alias bomb", head + "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n", "aliases expand"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("w.yaml", []byte(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v, want an error containing %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "w.yaml: ") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

// TestSelect: the policy keeps exactly the allowed versions, newest first.
func TestSelect(t *testing.T) {
	tags := []string{"v1.8.3", "v1.9.0", "v1.9.1", "v1.9.2-rc.1", "v1.10.0", "v2.0.0-alpha.1", "latest", "nightly-20240101", "v1.9.1", "1.9.1"}
	cands := make([]Candidate, len(tags))
	for i, s := range tags {
		cands[i] = Candidate{Tag: s}
	}
	for _, tc := range []struct {
		name    string
		p       VersionPolicy
		want    []string
		notVers int
	}{
		{"any, no pre-releases", VersionPolicy{Strip: []string{"v"}}, []string{"1.10.0", "1.9.1", "1.9.0", "1.8.3"}, 2},
		{"stay on 1.9", VersionPolicy{Strip: []string{"v"}, Constraint: "~1.9"}, []string{"1.9.1", "1.9.0"}, 2},
		{"1.9 with pre-releases", VersionPolicy{Strip: []string{"v"}, Constraint: "~1.9", Prerelease: "include"}, []string{"1.9.2-rc.1", "1.9.1", "1.9.0"}, 2},
		{"follow majors with pre-releases", VersionPolicy{Constraint: ">=1.9", Prerelease: "include"}, []string{"2.0.0-alpha.1", "1.10.0", "1.9.2-rc.1", "1.9.1", "1.9.0"}, 2},
		{"pattern group", VersionPolicy{Pattern: `^v(\d+\.\d+\.\d+)$`}, []string{"1.10.0", "1.9.1", "1.9.0", "1.8.3"}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := compile(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			s := p.selectVersions(cands)
			var got []string
			for _, c := range s.Allowed {
				got = append(got, c.Version)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") || s.NotVersions != tc.notVers {
				t.Errorf("selectVersions = %v (%d not versions), want %v (%d)", got, s.NotVersions, tc.want, tc.notVers)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	c := Candidate{Tag: "v1.9.2", Version: "1.9.2"}
	got := Expand("https://x/{tag}/{major}.{minor}/op-{version}-{patch}.yaml?{appVersion}", c, "2.0")
	if want := "https://x/v1.9.2/1.9/op-1.9.2-2.yaml?2.0"; got != want {
		t.Errorf("Expand = %q, want %q", got, want)
	}
}

// TestAgainst: a rule that does not fit its recipe is refused, naming
// what does not fit.
func TestAgainst(t *testing.T) {
	rec, _, err := recipe.Parse("recipe.yaml", []byte(`apiVersion: kubepkg.dev/v1
kind: Recipe
metadata: {name: x}
spec:
  version: 1.0.0
  build: 1
  sources:
    up: {url: "https://x/1.0.0/a.yaml", sha256: "`+strings.Repeat("a", 64)+`"}
    stack: {git: {url: "https://x/s", commit: "`+strings.Repeat("b", 40)+`"}}
    local: {dir: d}
  package:
    images: [quay.io/x/app:v1.0.0]
    variants: [{name: default, requires: [{package: other, version: "~1"}]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	const head = "apiVersion: kbuild.dev/v1alpha1\nkind: Watch\nupstream: {git: {url: x}}\n"
	for _, tc := range []struct{ name, rule, want string }{
		{"fits", "sources: {up: {url: \"https://x/{version}/a.yaml\"}}\nkeep: [stack]\nimages: [{repository: quay.io/x/*, tag: \"v{version}\"}]\nrequires: [{package: other, version: \"~{major}\"}]\n", ""},
		{"source left out", "sources: {up: {url: \"https://x/{version}/a.yaml\"}}\n", "source stack: neither followed"},
		{"no such source", "sources: {nope: {url: \"https://x\"}}\nkeep: [up, stack]\n", "sources.nope: the recipe has no source nope"},
		{"wrong kind", "sources: {stack: {url: \"https://x\"}}\nkeep: [up]\n", "sources.stack: url and asset follow a url source"},
		{"image rule matching nothing", "keep: [up, stack]\nimages: [{repository: docker.io/*, tag: x}]\n", "images.0: docker.io/* matches no image"},
		{"requirement not there", "keep: [up, stack]\nrequires: [{package: z, version: \"~{major}\"}]\n", "requires.0: no variant requires package z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse("watch.yaml", []byte(head+tc.rule))
			if err != nil {
				t.Fatal(err)
			}
			err = r.Against("watch.yaml", rec)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Against = %v, want %q", err, tc.want)
			}
		})
	}
}
