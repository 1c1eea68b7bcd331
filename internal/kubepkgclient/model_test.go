package kubepkgclient

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func foreman(version string, build int) Release {
	return Release{Package: "foreman", Version: version, Build: build, Provides: []string{"build:foreman@" + version + "+build." + strconv.Itoa(build)}}
}

// stack pins foreman version build, with the build capability.
func stack(version string, build int) Release {
	return Release{Package: "stack", Version: "1.0.0", Build: 1, Requires: []Requirement{
		{Package: "foreman", Version: "=" + version + "+build." + strconv.Itoa(build)},
		{Capability: "build:foreman@" + version + "+build." + strconv.Itoa(build)},
	}}
}

func runs(t *testing.T, c *Cluster, name, want string) {
	t.Helper()
	r, ok := c.Runs(name)
	if got := r.String(); !ok || got != want {
		t.Errorf("%s runs %q (%v), want %q", name, got, ok, want)
	}
}

// TestInstallAndFollow: what kubepkg does with a release set, member by
// member, as its code reads (see the package comment).
func TestInstallAndFollow(t *testing.T) {
	x := NewIndex(stack("3.15.0", 2), foreman("3.15.0", 1), foreman("3.15.0", 2))
	c, err := Install(x, "stack", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Packages["foreman"].Constraint; got != "~3.15" {
		t.Errorf("install wrote spec.version %q on the member, want ~3.15", got)
	}
	runs(t, c, "foreman", "foreman 3.15.0 build 2")
	if ok, why := c.Ready("stack"); !ok {
		t.Errorf("the set is not ready: %s", why)
	}

	// A patch release of the member: the running member moves to it, the
	// set goes unready; a fresh install plans 3.15.0 build 2 (the set's
	// "=3.15.0") and the operator then runs 3.15.1.
	y := x.With(foreman("3.15.1", 1))
	c.Reconcile(y)
	runs(t, c, "foreman", "foreman 3.15.1 build 1")
	if ok, why := c.Ready("stack"); ok || !strings.Contains(why, "installed version 3.15.1 does not satisfy =3.15.0+build.2") {
		t.Errorf("the set after the member moved: ready %v, %s", ok, why)
	}
	fresh, err := Install(y, "stack", "")
	if err != nil {
		t.Fatal(err)
	}
	if p := fresh.Packages["foreman"].Planned.String(); p != "foreman 3.15.0 build 2" {
		t.Errorf("a fresh install planned %s", p)
	}
	runs(t, fresh, "foreman", "foreman 3.15.1 build 1")

	// A newer build of the pinned version: the catalog offers only it, so
	// a fresh install of the set (which requires the build capability)
	// is refused; a running member moves to it.
	z := x.With(foreman("3.15.0", 3))
	if _, err := Install(z, "stack", ""); !errors.Is(err, ErrUnresolvable) || !strings.Contains(err.Error(), "nothing provides build:foreman@3.15.0+build.2") {
		t.Errorf("a fresh install with a newer build of the pinned version: %v", err)
	}
	c2, _ := Install(x, "stack", "")
	c2.Reconcile(z)
	runs(t, c2, "foreman", "foreman 3.15.0 build 3")
	if ok, why := c2.Ready("stack"); ok || !strings.Contains(why, "capability build:foreman@3.15.0+build.2: no installed package provides it") {
		t.Errorf("the set after the member moved to build 3: ready %v, %s", ok, why)
	}
	// The next minor is not followed.
	c3, _ := Install(x, "stack", "")
	c3.Reconcile(x.With(foreman("3.16.0", 1)))
	runs(t, c3, "foreman", "foreman 3.15.0 build 2")
}

// TestWithdrawn: a withdrawn build leaves the index; the operator moves a
// Package running it to the newest build left that meets its spec.version
// (another build of the version, or an older patch release in ~X.Y), and
// when none is left keeps running it.
func TestWithdrawn(t *testing.T) {
	x := NewIndex(foreman("3.15.0", 1), foreman("3.15.0", 2), foreman("3.14.0", 1))
	for _, tc := range []struct {
		name       string
		x          *Index
		constraint string
		withdraw   Release
		want       string
	}{
		{"another build of the version", x, "", foreman("3.15.0", 2), "foreman 3.15.0 build 1"},
		{"another build, ~X.Y", x, "~3.15", foreman("3.15.0", 2), "foreman 3.15.0 build 1"},
		{"an older patch release", x.With(foreman("3.15.1", 1)), "~3.15", foreman("3.15.1", 1), "foreman 3.15.0 build 2"},
		{"none meets spec.version: keeps running", NewIndex(foreman("3.15.0", 2), foreman("3.14.0", 1)), "~3.15", foreman("3.15.0", 2), "foreman 3.15.0 build 2"},
		{"no build of the package left: keeps running", NewIndex(foreman("3.15.0", 2)), "~3.15", foreman("3.15.0", 2), "foreman 3.15.0 build 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Install(tc.x, "foreman", tc.constraint)
			if err != nil {
				t.Fatal(err)
			}
			runs(t, c, "foreman", tc.withdraw.String())
			c.Reconcile(tc.x.Without(tc.withdraw.Package, tc.withdraw.Version, tc.withdraw.Build))
			runs(t, c, "foreman", tc.want)
			if _, err := Install(tc.x.Without(tc.withdraw.Package, tc.withdraw.Version, tc.withdraw.Build), "foreman", tc.constraint); err == nil && tc.want == tc.withdraw.String() && tc.constraint != "" {
				t.Errorf("a fresh install found a version meeting %s after the withdrawal", tc.constraint)
			}
		})
	}
}

// TestSatisfies: kubepkg's reading of the constraints a set and install
// write.
func TestSatisfies(t *testing.T) {
	for _, tc := range []struct {
		version, constraint string
		want                bool
	}{
		{"3.15.0", "=3.15.0+build.2", true},
		{"3.15.1", "=3.15.0+build.2", false},
		{"3.15.1", "~3.15", true},
		{"3.16.0", "~3.15", false},
		{"3.15.1-rc.1", "~3.15", false},
		{"v0.2.2", "=0.2.2+build.1", true},
		{"0.2.2", "=v0.2.2+build.1", true},
		{"3.15.0", "", true},
	} {
		if got := Satisfies(tc.version, tc.constraint); got != tc.want {
			t.Errorf("Satisfies(%q, %q) = %v, want %v", tc.version, tc.constraint, got, tc.want)
		}
	}
}
