package suite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/kubepkgclient"
	"kbuild.dev/kbuild/internal/stacktest"
)

// modelOf is x as kubepkg's store holds it (kubepkgclient): each build with
// what its default variant requires and what it provides.
func modelOf(x *index.RepositoryIndex) *kubepkgclient.Index {
	var rs []kubepkgclient.Release
	for name, p := range x.Packages {
		for _, v := range p.Versions {
			r := kubepkgclient.Release{Package: name, Version: v.Version, Build: v.Build, Provides: v.Spec.Provides}
			for _, va := range v.Spec.Variants {
				if va.Name != "default" {
					continue
				}
				for _, q := range va.Requires {
					r.Requires = append(r.Requires, kubepkgclient.Requirement{Package: q.Package, Capability: q.Capability, Version: q.Version, Optional: q.Optional})
				}
			}
			rs = append(rs, r)
		}
	}
	return kubepkgclient.NewIndex(rs...)
}

// pin reads the build a set's requirement pins, "=VERSION+build.N": the
// test's own reading, so the oracle does not use kbuild's.
var pin = regexp.MustCompile(`^=(.+)\+build\.([0-9]+)$`)

// offPins returns, for a cluster, each member of the set it runs that
// does not run the build the set pins, as "pkg runs V build N, pinned V build M".
func offPins(c *kubepkgclient.Cluster, set string) []string {
	s, ok := c.Runs(set)
	if !ok {
		return []string{set + " runs nothing"}
	}
	var off []string
	for _, q := range s.Requires {
		m := pin.FindStringSubmatch(q.Version)
		if q.Package == "" || m == nil {
			continue
		}
		b, _ := strconv.Atoi(m[2])
		got, ok := c.Runs(q.Package)
		if !ok || got.Version != m[1] || got.Build != b {
			off = append(off, fmt.Sprintf("%s runs %s build %d, pinned %s build %d", q.Package, got.Version, got.Build, m[1], b))
		}
	}
	return off
}

// subscriberSees says what kubepkg does when target is promoted into
// testing, from the independent model: a cluster that installed the set
// from testing before, once its operator sees the new index, and a fresh
// install of the set after. It returns why the set's pins are not what
// runs, or nil.
func subscriberSees(t *testing.T, r *repo, target evidence.Target) []string {
	t.Helper()
	before := r.read("testing").Verified.Index
	refs, err := Versions(r.x, target)
	if err != nil {
		t.Fatal(err)
	}
	var added []kubepkgclient.Release
	for _, ref := range refs {
		if before.Find(ref.Package, ref.Version, ref.Build) == nil {
			one := &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{ref.Package: {Versions: []index.IndexVersion{*r.x.Find(ref.Package, ref.Version, ref.Build)}}}}
			added = append(added, modelOf(one).Catalog(ref.Package)...)
		}
	}
	mb := modelOf(before)
	after := mb.With(added...)
	var why []string
	c, err := kubepkgclient.Install(mb, "foreman-stack", "")
	if err != nil {
		t.Fatalf("installing the set from testing before the promotion: %v", err)
	}
	if off := offPins(c, "foreman-stack"); off != nil {
		t.Fatalf("before the promotion, the set already runs off its pins: %v", off)
	}
	c.Reconcile(after)
	for _, o := range offPins(c, "foreman-stack") {
		why = append(why, "a running cluster: "+o)
	}
	if fresh, err := kubepkgclient.Install(after, "foreman-stack", ""); err == nil {
		for _, o := range offPins(fresh, "foreman-stack") {
			why = append(why, "a fresh install: "+o)
		}
	}
	return why
}

// TestPromoteSetsUnderKubepkg: promotion into a suite holding a release
// set is refused exactly when kubepkg, as the independent model encodes
// its store, install planning and operator, would run a member build the
// set does not pin — in a cluster that runs the set, or in a fresh
// install — and the refusal names the set and both builds.
func TestPromoteSetsUnderKubepkg(t *testing.T) {
	dist := stacktest.CopyDist(t, append(all, "foreman-3.15.0-2")...)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dist, name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dist, name+".yaml"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f1 := read("foreman-3.15.0-1")
	write("foreman-3.15.1-1", strings.Replace(f1, "  version: 3.15.0\n", "  version: 3.15.1\n", 1))
	write("foreman-3.16.0-1", strings.Replace(f1, "  version: 3.15.0\n", "  version: 3.16.0\n", 1))
	write("foreman-stack-3.15.0-4", strings.Replace(strings.Replace(read("foreman-stack-3.15.0-1"), "  build: 1\n", "  build: 4\n", 1), `version: "=3.15.0+build.1"`, `version: "=3.15.0+build.2"`, 1))
	r := newRepoDist(t, dist)
	late := gen.AddDate(0, 1, 0)
	env := "kubernetes=1.33,arch=amd64"
	r.attest(r.x, stack, evidence.Pass, env, late, r.qa)
	if _, err := r.promote("testing", stack, gen); err != nil {
		t.Fatal(err)
	}
	target := func(pkg, version string, build int) evidence.Target {
		return evidence.Target{Package: pkg, Version: version, Build: build}
	}
	for _, tc := range []struct {
		name   string
		target evidence.Target
		want   string // "" when the promotion goes through
	}{
		{"a patch release of a member, alone", target("foreman", "3.15.1", 1),
			"release set foreman-stack 3.15.0 build 1 pins foreman 3.15.0 build 1, but members installed with it (spec.version \"~3.15\") move to foreman 3.15.1 build 1"},
		{"a newer build of a member, alone", target("foreman", "3.15.0", 2),
			"release set foreman-stack 3.15.0 build 1 pins foreman 3.15.0 build 1, but members installed with it (spec.version \"~3.15\") move to foreman 3.15.0 build 2"},
		{"a member's next minor, alone", target("foreman", "3.16.0", 1), ""},
		{"a set build pinning the newer member build", target("foreman-stack", "3.15.0", 4), ""},
		{"the patch release once the set pins build 2", target("foreman", "3.15.1", 1),
			"release set foreman-stack 3.15.0 build 4 pins foreman 3.15.0 build 2, but members installed with it (spec.version \"~3.15\") move to foreman 3.15.1 build 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			moves := subscriberSees(t, r, tc.target)
			if (len(moves) > 0) != (tc.want != "") {
				t.Fatalf("kubepkg (the model) runs off the set's pins: %v; the test expects a refusal: %v", moves, tc.want != "")
			}
			before, _ := os.ReadFile(filepath.Join(r.site, "testing", "index.yaml"))
			r.attest(r.x, tc.target, evidence.Pass, env, late, r.qa)
			_, err := r.promote("testing", tc.target, gen)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("promote %s: %v", tc.target, err)
				}
				return
			}
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("promote %s = %v\nwant a refusal containing %q (kubepkg: %v)", tc.target, err, tc.want, moves)
			}
			if after, _ := os.ReadFile(filepath.Join(r.site, "testing", "index.yaml")); string(before) != string(after) {
				t.Fatal("a refused promotion changed the testing index")
			}
		})
	}
}
