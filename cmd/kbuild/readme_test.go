package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kbuild.dev/kbuild/bundle"
	"kbuild.dev/kbuild/site"
)

// TestReadmeClusters: README says how each kind of cluster (kubepkg,
// Flux, Argo CD, Helm, air-gapped) subscribes and verifies, in a row
// each of its summary table, with the repository, range and paths the
// code writes (site.FollowRepository, site.FollowRange,
// bundle.ResignDir); and every test README cites as proof exists.
func TestReadmeClusters(t *testing.T) {
	readme := readFile(t, filepath.Join(repoRoot, "README.md"))
	const heading = "## How each kind of cluster subscribes and verifies\n"
	_, section, ok := strings.Cut(readme, heading)
	if !ok {
		t.Fatalf("README.md has no section %q", strings.TrimSpace(heading))
	}
	section, _, _ = strings.Cut(section, "\n## ")
	follow := site.FollowRepository("oci://REPO", "SUITE", "CHART")
	rows := map[string][]string{
		"kubepkg":    {"kubepkg repo add NAME SITE_URL/SUITE/index.yaml --root-key root-key-1.pub", "--public-key index.pub", "index.yaml.sig"},
		"Flux":       {"url: " + follow, `ref.semver: "` + site.FollowRange + `"`, "verify: {provider: cosign, secretRef:", "matchOIDCIdentity"},
		"Argo CD":    {"repoURL: " + follow, `targetRevision: "` + site.FollowRange + `"`, "cosign verify"},
		"Helm":       {"helm upgrade --install RELEASE " + follow + " --version '" + site.FollowRange + "'", "cosign verify --key index.pub"},
		"air-gapped": {"SITE/" + bundle.ResignDir + "/index.yaml", "--trusted-root"},
	}
	for cluster, want := range rows {
		var row string
		for _, l := range strings.Split(section, "\n") {
			if strings.HasPrefix(l, "| "+cluster+" |") {
				row = l
			}
		}
		if row == "" {
			t.Errorf("README's table has no row for %s clusters", cluster)
			continue
		}
		cells := strings.Split(strings.Trim(row, "|"), " | ")
		if len(cells) != 4 {
			t.Errorf("README's %s row has %d cells, want 4 (cluster, subscribes to, verifies, proved by): %s", cluster, len(cells), row)
			continue
		}
		for _, w := range want {
			if !strings.Contains(row, w) {
				t.Errorf("README's %s row lacks %s", cluster, w)
			}
		}
		if !regexp.MustCompile("`Test[A-Z]").MatchString(cells[3]) {
			t.Errorf("README's %s row names no test that proves it", cluster)
		}
	}
	// Every test README cites exists (a name followed by * is a prefix).
	defined := map[string]bool{}
	funcRE := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]*)\(`)
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == ".cache") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, "_test.go") {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range funcRE.FindAllStringSubmatch(string(data), -1) {
				defined[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("`(Test[A-Z][A-Za-z0-9_]*)(\\*?)").FindAllStringSubmatch(readme, -1) {
		name, prefix := m[1], m[2] == "*"
		found := defined[name]
		for d := range defined {
			found = found || prefix && strings.HasPrefix(d, name)
		}
		if !found {
			t.Errorf("README cites %s, and no test of that name exists", name)
		}
	}
}
