package releaseset

import (
	"fmt"
	"testing"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/kubepkgclient"
	"kbuild.dev/kbuild/spec"
)

// TestSelectsAgreesWithKubepkg: for every build a Package may run and the
// constraints 'kubepkg install' and a set write, Selects picks what the
// independent model of kubepkg's operator (kubepkgclient) picks, in an
// index of several versions, builds, a pre-release and a "v" spelling.
func TestSelectsAgreesWithKubepkg(t *testing.T) {
	type rel struct {
		version string
		build   int
	}
	rels := []rel{{"3.14.0", 1}, {"3.15.0", 1}, {"3.15.0", 2}, {"3.15.1", 1}, {"3.15.2-rc.1", 1}, {"v3.16.0", 1}, {"4.0.0", 3}}
	x := &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{"foreman": {}}}
	var model []kubepkgclient.Release
	for _, r := range rels {
		x.Packages["foreman"].Versions = append(x.Packages["foreman"].Versions, index.IndexVersion{Version: r.version, Build: r.build, Spec: spec.PackageSpec{Version: r.version, Build: r.build}})
		model = append(model, kubepkgclient.Release{Package: "foreman", Version: r.version, Build: r.build})
	}
	m := kubepkgclient.NewIndex(model...)
	for _, r := range rels {
		for _, c := range []string{Follow(r.version), kubepkgclient.DefaultConstraint(r.version), "=" + r.version, "=" + r.version + "+build.9", ""} {
			want, ok := m.Select("foreman", c)
			got := Selects(x, "foreman", c)
			g, w := "none", "none"
			if got != nil {
				g = fmt.Sprintf("%s build %d", got.Version, got.Build)
			}
			if ok {
				w = fmt.Sprintf("%s build %d", want.Version, want.Build)
			}
			if g != w {
				t.Errorf("Selects(foreman, %q) = %s, kubepkg selects %s", c, g, w)
			}
		}
	}
	if Follow("v3.15.0") != "~3.15" || Follow("3.15.0") != kubepkgclient.DefaultConstraint("3.15.0") {
		t.Errorf("Follow = %q, %q", Follow("v3.15.0"), Follow("3.15.0"))
	}
}

// TestAfterWithdrawal: what a cluster running a withdrawn build does, for
// ~MAJOR.MINOR and =VERSION.
func TestAfterWithdrawal(t *testing.T) {
	x := &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{"foreman": {Versions: []index.IndexVersion{
		{Version: "3.15.0", Build: 1}, {Version: "3.14.0", Build: 2}}}}}
	for _, tc := range []struct {
		version string
		want    string
	}{
		{"3.15.0", "~3.15: 3.15.0 build 1; =3.15.0: 3.15.0 build 1"},
		{"3.15.1", "~3.15: 3.15.0 build 1; =3.15.1: keeps it"},
		{"3.16.0", "~3.16: keeps it; =3.16.0: keeps it"},
	} {
		got := ""
		for i, f := range AfterWithdrawal(x, "foreman", tc.version) {
			if i > 0 {
				got += "; "
			}
			to := "keeps it"
			if f.To != nil {
				to = fmt.Sprintf("%s build %d", f.To.Version, f.To.Build)
			}
			got += f.Constraint + ": " + to
		}
		if got != tc.want {
			t.Errorf("AfterWithdrawal(foreman %s) = %s, want %s", tc.version, got, tc.want)
		}
	}
}
