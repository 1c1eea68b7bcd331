package qualify

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// TestResolveWaves: packages that require nothing of one another share a
// wave (kubepkg's operator installs them at once), a package comes one
// wave after what it requires, and a component one level after what it
// dependsOn: the Foreman stack's shape, whose members need one another's
// objects to become ready.
func TestResolveWaves(t *testing.T) {
	chart := func(n string) *spec.ChartRef {
		return &spec.ChartRef{Repository: "oci://registry.example/charts", Name: n, Version: "1.0.0", Digest: "sha256:" + strings.Repeat("0", 64)}
	}
	pkg := func(name string, requires []spec.Requirement, comps ...spec.Component) index.IndexVersion {
		return index.IndexVersion{Version: "1.0.0", Build: 1, Spec: spec.PackageSpec{Version: "1.0.0", Build: 1,
			Variants: []spec.Variant{{Name: "default", Requires: requires, Components: comps}}}}
	}
	comp := func(name string, dependsOn ...string) spec.Component {
		return spec.Component{Name: name, Chart: chart(name), Install: &spec.Install{Namespace: "ns", DependsOn: dependsOn}}
	}
	x := &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{
		"foreman":     {Versions: []index.IndexVersion{pkg("foreman", nil, comp("stack"))}},
		"candlepin":   {Versions: []index.IndexVersion{pkg("candlepin", nil, comp("cp"))}},
		"smart-proxy": {Versions: []index.IndexVersion{pkg("smart-proxy", []spec.Requirement{{Package: "foreman", Version: "1.0.0"}}, comp("proxy"))}},
		"operator": {Versions: []index.IndexVersion{pkg("operator", []spec.Requirement{{Package: "smart-proxy", Version: ">=1"}},
			comp("cr", "op"), comp("op"))}},
	}}
	p, err := Resolve(x, evidence.Target{Package: "operator", Version: "1.0.0", Build: 1}, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range p.Releases {
		got = append(got, fmt.Sprintf("%s/%s %d.%d", r.Package, r.Component, r.Wave, r.Level))
	}
	want := "foreman/stack 0.0 smart-proxy/proxy 1.0 operator/op 2.0 operator/cr 2.1"
	if strings.Join(got, " ") != want {
		t.Errorf("releases %v, want %s", got, want)
	}
	x.Packages["operator"].Versions[0].Spec.Variants[0].Requires = append(x.Packages["operator"].Versions[0].Spec.Variants[0].Requires, spec.Requirement{Package: "candlepin", Version: ">=1"})
	if p, err = Resolve(x, evidence.Target{Package: "operator", Version: "1.0.0", Build: 1}, ""); err != nil {
		t.Fatal(err)
	}
	if p.Releases[0].Package != "candlepin" || p.Releases[0].Wave != 0 || p.Releases[1].Wave != 0 {
		t.Errorf("candlepin and foreman require nothing, so both are in wave 0: %+v", p.Releases[:2])
	}
}

// TestValidatesFields: from Kubernetes 1.27 the server validates every
// kind's fields, so Helm's client asks nothing.
func TestValidatesFields(t *testing.T) {
	for v, want := range map[string]bool{"v1.37.2": true, "v1.27.0": true, "v1.26.15": false, "v1.33.1+k3s1": true, "": false} {
		if got := validatesFields(v); got != want {
			t.Errorf("validatesFields(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestUntested: the builds with no evidence, a set's members left to the
// set.
func TestUntested(t *testing.T) {
	v := func(version string, build int, requires ...spec.Requirement) index.IndexVersion {
		return index.IndexVersion{Version: version, Build: build, Spec: spec.PackageSpec{Version: version, Build: build, Variants: []spec.Variant{{Name: "default", Requires: requires}}}}
	}
	x := &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{
		"web":   {Versions: []index.IndexVersion{v("1.1.0", 1), v("1.0.0", 2), v("1.0.0", 1)}},
		"db":    {Versions: []index.IndexVersion{v("2.0.0", 1)}},
		"stack": {Versions: []index.IndexVersion{v("1.0.0", 1, spec.Requirement{Package: "db", Version: "=2.0.0+build.1"})}},
	}}
	dir := t.TempDir()
	for _, f := range []string{"web-1.0.0-1/kubernetes=1.37.intoto.json", "web-1.0.0-2/notes.txt"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644)
	}
	got, err := Untested(x, dir)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, g := range got {
		s = append(s, g.String())
	}
	if want := "stack 1.0.0 build 1, web 1.1.0 build 1, web 1.0.0 build 2"; strings.Join(s, ", ") != want {
		t.Errorf("untested: %s, want %s", strings.Join(s, ", "), want)
	}
}
