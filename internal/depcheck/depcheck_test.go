package depcheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/testenv"
)

const module = "kbuild.dev/kbuild/"

// allowed lists, for each package, the kbuild packages its non-test files
// may import. A package missing here may import nothing of kbuild.
var allowed = map[string][]string{
	"recipe":               {"index", "internal/yamlbound"},
	"recipe/draft":         {"builder", "recipe", "sources"},
	"builder":              {"recipe", "index", "internal/dist", "internal/netdeadline", "patches", "releaseset", "sources"},
	"sources":              {"recipe", "index", "internal/netdeadline", "internal/plainhttp", "internal/yamlbound"},
	"patches":              {"recipe", "internal/yamlbound"},
	"sbom":                 {"index"},
	"sbom/trivytest":       {},
	"site":                 {"index"},
	"internal/dist":        {"index"},
	"internal/distindex":   {"index"},
	"internal/fetchsite":   {"index", "internal/netdeadline"},
	"internal/chartpin":    {"index", "internal/netdeadline", "internal/plainhttp"},
	"internal/ociserve":    {},
	"internal/review":      {"builder", "recipe", "index", "internal/chartpin", "internal/plainhttp", "sources"},
	"internal/netdeadline": {},
	"internal/testenv":     {},
	"internal/testtree":    {},
	"internal/yamlbound":   {},
	"index":                {"internal/yamlscan"},
	"internal/yamlscan":    {},
	"examples":             {},
	"scripts/hostile":      {},
	"bundle":               {"builder", "bundle/nodeconfig", "index", "internal/chartpin", "internal/dist", "internal/fetchsite", "internal/netdeadline"},
	"bundle/nodeconfig":    {"internal/dist"},
	"publish":              {"builder", "recipe", "index", "internal/chartpin", "internal/dist", "internal/distindex", "internal/fetchsite", "internal/netdeadline", "sbom", "site", "sources"},
	"internal/plainhttp":   {},
	"internal/stacktest":   {"index", "internal/distindex"},
	"releaseset":           {"index"},
	"evidence":             {"index", "releaseset"},
	"suite":                {"evidence", "index", "internal/dist", "internal/fetchsite", "publish", "releaseset"},
}

func TestPackageGraph(t *testing.T) {
	root := testenv.RepoRoot()
	imports := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		pkg := filepath.ToSlash(rel)
		if imports[pkg] == nil {
			imports[pkg] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if strings.HasPrefix(path, module) {
				imports[pkg][strings.TrimPrefix(path, module)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "kbuild")); err != nil || imports["cmd/kbuild"] == nil {
		t.Fatalf("found no cmd/kbuild under %s", root)
	}
	for pkg, deps := range imports {
		if strings.HasPrefix(pkg, "cmd/") || strings.HasPrefix(pkg, "bench/") || pkg == "internal/depcheck" {
			continue
		}
		ok := map[string]bool{}
		list, known := allowed[pkg]
		if !known {
			t.Errorf("package %s is not in the dependency table of %s; add it with what it may import", pkg, "internal/depcheck")
			continue
		}
		for _, a := range list {
			ok[a] = true
		}
		var bad []string
		for d := range deps {
			if !ok[d] {
				bad = append(bad, d)
			}
		}
		sort.Strings(bad)
		if len(bad) > 0 {
			t.Errorf("%s imports %s, which the package graph does not allow (allowed: %v)", pkg, strings.Join(bad, ", "), list)
		}
	}
}
