package suite

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/publish"
)

func TestLoad(t *testing.T) {
	c, found, err := Load("testdata/suites.yaml")
	if err != nil || !found {
		t.Fatalf("Load = %v, %v", found, err)
	}
	if strings.Join(c.Names(), ",") != "unstable,testing,stable" || c.First() != "unstable" || c.Index("stable") != 2 || c.Index("sid") != -1 {
		t.Fatalf("suites = %v", c.Names())
	}
	if got := c.Suites[2].Policy.String(); got != "pass on >= 2 Kubernetes minor versions and on amd64 and arm64 with runtime=containerd, passing install, upgrade, rollback, signed by qa" {
		t.Errorf("policy = %q", got)
	}
	if _, found, err := Load(filepath.Join(t.TempDir(), File)); found || err != nil {
		t.Fatalf("a repository without suites.yaml: found %v, %v", found, err)
	}
}

func TestParseRefuses(t *testing.T) {
	good, err := os.ReadFile("testdata/suites.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"unknown field", "      role: qa\n  - name: stable", "      role: qa\n      minors: 2\n  - name: stable", "line 12: field minors not found"},
		{"wrong kind", "kind: Suites", "kind: Suite", `kind "Suite": want kbuild.dev/v1 and Suites`},
		{"policy on the first suite", "  - name: unstable\n", "  - name: unstable\n    policy: {kubernetesMinors: 1, architectures: [amd64], role: qa}\n", "suites[0] (unstable): the first suite takes new builds from publish and has no policy"},
		{"no policy", "  - name: testing\n    policy:\n      kubernetesMinors: 1\n      architectures: [amd64]\n      role: qa\n", "  - name: testing\n", "suites[1] (testing): policy missing"},
		{"role other than qa", "      role: qa\n  - name: stable", "      role: index\n  - name: stable", `suites[1] (testing): policy: role "index": evidence is signed by the root's "qa" role`},
		{"no minors", "kubernetesMinors: 1", "kubernetesMinors: 0", "kubernetesMinors is 0; want 1 or more"},
		{"unknown arch", "architectures: [amd64]\n", "architectures: [x86]\n", `suites[1] (testing): policy: architectures: environment arch="x86"`},
		{"twice", "  - name: stable", "  - name: testing", "suites[2] (testing): listed twice"},
		{"reserved name", "  - name: stable", "  - name: evidence", "the name is a directory of the site"},
		{"bad name", "  - name: stable", "  - name: Stable", `suites[2]: name: suite name "Stable" is not a DNS-1123 label`},
		{"root suite not the first", "kind: Suites\n", "kind: Suites\nrootSuite: testing\n", "rootSuite testing: only the first suite (unstable) can be served at the site root"},
		{"compat is the matrices' directory", "  - name: stable", "  - name: compat", "the name is a directory of the site"},
		{"environment sets arch", "environment: {runtime: containerd}", "environment: {arch: arm64}", "environment: arch is set by kubernetesMinors and architectures"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := strings.Replace(string(good), tc.old, tc.new, 1)
			if data == string(good) {
				t.Fatalf("test does not change the file: %q", tc.old)
			}
			if _, err := Parse([]byte(data)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v\nwant %q", err, tc.want)
			}
		})
	}
	if _, err := Parse([]byte("apiVersion: kbuild.dev/v1\nkind: Suites\nsuites: []\n")); err == nil || !strings.Contains(err.Error(), "suites: none listed") {
		t.Errorf("no suites: %v", err)
	}
}

func TestSiteDir(t *testing.T) {
	for _, tc := range []struct {
		name, site, suite, file, want, wantErr string
	}{
		{name: "first suite", file: "testdata/suites.yaml", want: filepath.Join("site", "unstable")},
		{name: "named suite", suite: "stable", file: "testdata/suites.yaml", want: filepath.Join("site", "stable")},
		{name: "unknown suite", suite: "nightly", file: "testdata/suites.yaml", wantErr: "suite nightly is not in testdata/suites.yaml (suites: [unstable testing stable])"},
		{name: "no suites file", file: "testdata/none.yaml", want: "site"},
		{name: "a published site", site: "https://acme.github.io/packages/", suite: "testing", file: "testdata/suites.yaml", want: "https://acme.github.io/packages/testing"},
		{name: "suite without a suites file", suite: "stable", file: "testdata/none.yaml", wantErr: "suite stable: there is no testdata/none.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.site == "" {
				tc.site = "site"
			}
			got, err := SiteDir(tc.site, tc.suite, tc.file)
			if tc.wantErr != "" {
				var ie *publish.InputError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &ie) || ie.Input != "suite" {
					t.Fatalf("SiteDir = %q, %v; want an InputError about the suite containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("SiteDir = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestRepositorySuites: the repository's own suites.yaml, which CI's
// publish.yml and promote.yml read, serves unstable at the site root and
// asks what issue 14 asks of stable.
func TestRepositorySuites(t *testing.T) {
	c, found, err := Load("../" + File)
	if err != nil || !found {
		t.Fatalf("Load(../%s) = %v, %v", File, found, err)
	}
	if strings.Join(c.Names(), ",") != "unstable,testing,stable" || c.RootSuite != "unstable" {
		t.Fatalf("suites %v, rootSuite %q", c.Names(), c.RootSuite)
	}
	for i, want := range []string{
		1: "pass on >= 1 Kubernetes minor versions and on amd64, signed by qa",
		2: "pass on >= 2 Kubernetes minor versions and on amd64 and arm64, passing install, upgrade, rollback, signed by qa",
	} {
		if i > 0 && c.Suites[i].Policy.String() != want {
			t.Errorf("%s: policy %q, want %q", c.Suites[i].Name, c.Suites[i].Policy, want)
		}
	}
}
