package releaseset

import (
	"errors"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/stacktest"
	"kbuild.dev/kbuild/spec"
)

func TestResolve(t *testing.T) {
	x := stacktest.Index(t)
	r, err := Resolve(x, "foreman-stack", "3.15.0", 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range r.Members {
		got = append(got, m.String())
		if m.Digest != x.Find(m.Package, m.Version, m.Build).Digest {
			t.Errorf("%s: digest %s is not the index's", m, m.Digest)
		}
	}
	if want := "candlepin 4.6.0 build 1, foreman 3.15.0 build 1, pulp 3.73.0 build 1, smart-proxy 3.15.0 build 1"; strings.Join(got, ", ") != want {
		t.Fatalf("members = %s, want %s", strings.Join(got, ", "), want)
	}
	if !strings.HasPrefix(r.Digest, "sha256:") || len(r.Digest) != 71 {
		t.Fatalf("set digest %q", r.Digest)
	}
	// The set digest covers every member's spec digest.
	changed := append([]ResolvedMember(nil), r.Members...)
	changed[2].Digest = "sha256:" + strings.Repeat("0", 64)
	if Digest(changed) == r.Digest {
		t.Fatal("the set digest does not change with a member's spec digest")
	}
	if Digest([]ResolvedMember{r.Members[3], r.Members[1], r.Members[0], r.Members[2]}) != r.Digest {
		t.Fatal("the set digest depends on member order")
	}
	if _, isSet, _ := Members(&x.Find("foreman", "3.15.0", 1).Spec); isSet {
		t.Fatal("foreman is not a set")
	}
}

// TestKubepkgResolves checks the form against the semver library kubepkg
// resolves requirements with: "=V+build.N" accepts exactly version V.
func TestKubepkgResolves(t *testing.T) {
	c, err := semver.NewConstraint(index.ExactBuild("3.15.0", 1))
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]bool{"3.15.0": true, "3.15.1": false, "3.14.9": false, "3.15.0-rc.1": false} {
		if got := c.Check(semver.MustParse(v)); got != want {
			t.Errorf("=3.15.0+build.1 accepts %s: %v, want %v", v, got, want)
		}
	}
}

func TestResolveRefuses(t *testing.T) {
	x := stacktest.Index(t)
	withdrawn := stacktest.Index(t, "foreman-3.15.0-1", "pulp-3.73.0-1", "candlepin-4.6.0-1", "smart-proxy-3.15.0-1", "foreman-stack-3.15.0-1")
	withdrawn.Packages["foreman"].Versions = nil
	withdrawn.Withdrawn = []index.Withdrawal{{Package: "foreman", Version: "3.15.0", Build: 1, Reason: "CVE-2026-0001"}}
	for _, tc := range []struct {
		name    string
		x       *index.RepositoryIndex
		pkg     string
		version string
		build   int
		want    string
	}{
		{"missing member", x, "foreman-stack", "3.15.0", 3, "foreman-stack 3.15.0 build 3: member candlepin 4.6.0 build 9 is not in the index; publish the member first"},
		{"withdrawn member", withdrawn, "foreman-stack", "3.15.0", 1, "member foreman 3.15.0 build 1 was withdrawn (CVE-2026-0001)"},
		{"conflicting image pins", x, "foreman-stack", "3.15.0", 2, "image quay.io/foreman/foreman is pinned to two digests: sha256:9c77128c7acd629c62686a9119816d6f6b7726cd6492d9eaa894d54c345c4941 by foreman 3.15.0 build 1"},
		{"not a set", x, "foreman", "3.15.0", 1, "foreman 3.15.0 build 1 pins no exact builds"},
		{"not in the index", x, "foreman-stack", "9.9.9", 1, "foreman-stack 9.9.9 build 1 is not in the index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(tc.x, tc.pkg, tc.version, tc.build)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Resolve = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestMembersRefuses(t *testing.T) {
	req := func(rs ...spec.Requirement) *spec.PackageSpec {
		return &spec.PackageSpec{Variants: []spec.Variant{{Name: "default", Requires: rs}}}
	}
	for _, tc := range []struct {
		name string
		spec *spec.PackageSpec
		want string
	}{
		{"loose member", req(spec.Requirement{Package: "foreman", Version: "=3.15.0+build.1"}, spec.Requirement{Package: "pulp", Version: "~3.73"}),
			`variant default requires pulp "~3.73"; write the version as "=VERSION+build.N"`},
		{"optional member", req(spec.Requirement{Package: "foreman", Version: "=3.15.0+build.1", Optional: true}), "foreman is optional"},
		{"two builds of one package", req(spec.Requirement{Package: "foreman", Version: "=3.15.0+build.1"}, spec.Requirement{Package: "foreman", Version: "=3.15.0+build.2"}),
			"the set pins foreman 3.15.0 build 1 and foreman 3.15.0 build 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, isSet, err := Members(tc.spec)
			if !isSet || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Members = %v, %v, want %q", isSet, err, tc.want)
			}
		})
	}
}

// TestBuildCapabilities: a set that requires each member's build
// capability resolves when every member provides its own, and is refused
// when one does not, when the set requires some members' but not all,
// when a capability names no pinned build, and when another build of a
// member provides the pinned build's capability.
func TestBuildCapabilities(t *testing.T) {
	members := []Member{
		{Package: "candlepin", Version: "4.6.0", Build: 1}, {Package: "foreman", Version: "3.15.0", Build: 1},
		{Package: "pulp", Version: "3.73.0", Build: 1}, {Package: "smart-proxy", Version: "3.15.0", Build: 1},
	}
	// stack returns the index with every member providing its build
	// capability and the set requiring those of want.
	stack := func(t *testing.T, want ...string) *index.RepositoryIndex {
		x := stacktest.Index(t)
		for _, m := range members {
			e := x.Find(m.Package, m.Version, m.Build)
			e.Spec.Provides = append(e.Spec.Provides, BuildCapability(m.Package, m.Version, m.Build))
		}
		set := x.Find("foreman-stack", "3.15.0", 1)
		for _, c := range want {
			set.Spec.Variants[0].Requires = append(set.Spec.Variants[0].Requires, spec.Requirement{Capability: c})
		}
		return x
	}
	all := []string{"build:candlepin@4.6.0+build.1", "build:foreman@3.15.0+build.1", "build:pulp@3.73.0+build.1", "build:smart-proxy@3.15.0+build.1"}
	if got := BuildCapability("foreman", "3.15.0", 2); got != "build:foreman@3.15.0+build.2" {
		t.Fatalf("BuildCapability = %q", got)
	}
	if _, err := Resolve(stack(t, all...), "foreman-stack", "3.15.0", 1); err != nil {
		t.Fatalf("a set requiring every member's build capability: %v", err)
	}
	if _, err := Resolve(stack(t), "foreman-stack", "3.15.0", 1); err != nil {
		t.Fatalf("a set requiring none: %v", err)
	}

	notProvided := stack(t, all...)
	e := notProvided.Find("pulp", "3.73.0", 1)
	e.Spec.Provides = e.Spec.Provides[:len(e.Spec.Provides)-1]
	stale := stack(t, all...)
	e = stale.Find("foreman", "3.15.0", 2)
	e.Spec.Provides = append(e.Spec.Provides, "build:foreman@3.15.0+build.1")
	for _, tc := range []struct {
		name string
		x    *index.RepositoryIndex
		want string
	}{
		{"a member does not provide it", notProvided, `requires capability build:pulp@3.73.0+build.1, which member pulp 3.73.0 build 1 does not provide; add "build:pulp@3.73.0+build.1" to spec.package.provides of its recipe`},
		{"some members only", stack(t, all[:3]...), `requires build capabilities of some members but not of all; add {capability: "build:smart-proxy@3.15.0+build.1"} to its requires`},
		{"a build the set does not pin", stack(t, append(all, "build:foreman@3.15.0+build.2")...), "requires capability build:foreman@3.15.0+build.2, which names no build the set pins"},
		{"another build provides it", stale, "foreman 3.15.0 build 2 provides build:foreman@3.15.0+build.1, another build's capability; a build provides only its own, build:foreman@3.15.0+build.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(tc.x, "foreman-stack", "3.15.0", 1)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Resolve = %v\nwant %q", err, tc.want)
			}
		})
	}
}
