package depcheck

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/testenv"
)

const module = "kbuild.dev/kbuild/"

// allowed lists, for each package, the kbuild packages its non-test files
// import. A package missing here may import nothing of kbuild, and an
// entry the package does not import fails the test too, so the table says
// what the code does.
var allowed = map[string][]string{
	// The formats: spec is the leaf, index reads and writes the repository
	// index of specs, trust decides whether an index may be believed.
	"spec":  {},
	"index": {"internal/yamlscan", "spec"},
	"trust": {"index", "internal/atomicfile", "internal/fault", "internal/yamlscan", "spec"},
	// The recipe model and the pipeline: recipe needs only the spec.
	"recipe":         {"internal/fault", "internal/yamlbound", "spec"},
	"recipe/draft":   {"builder", "internal/atomicfile", "recipe", "sources"},
	"sources":        {"internal/atomicfile", "internal/fault", "internal/netdeadline", "internal/ocilimit", "internal/plainhttp", "internal/tailbuffer", "internal/yamlbound", "recipe", "spec"},
	"patches":        {"internal/yamlbound", "recipe"},
	"watch":          {"internal/netdeadline", "internal/plainhttp", "internal/yamlbound", "recipe"},
	"bump":           {"builder", "index", "internal/atomicfile", "recipe", "review", "sources", "spec", "watch"},
	"builder":        {"builder/oci", "builder/render", "index", "internal/atomicfile", "internal/dist", "internal/fault", "patches", "recipe", "releaseset", "sigbundle", "sources", "spec", "trust"},
	"builder/oci":    {"internal/atomicfile", "internal/netdeadline", "internal/ocilimit"},
	"builder/render": {"internal/fault", "internal/tailbuffer", "recipe"},
	// What is published and how.
	"sbom":              {"index", "internal/tailbuffer", "spec"},
	"sbom/trivytest":    {},
	"site":              {"index", "internal/atomicfile", "internal/ociserve", "sitelayout", "spec"},
	"publish":           {"builder", "builder/oci", "index", "internal/atomicfile", "internal/chartpin", "internal/dist", "internal/netdeadline", "internal/ocilimit", "provenance", "recipe", "sbom", "sigbundle", "site", "sitelayout", "siteread", "sources", "spec", "trust"},
	"bundle":            {"builder/oci", "bundle/nodeconfig", "index", "internal/atomicfile", "internal/chartpin", "internal/dist", "internal/fault", "internal/netdeadline", "internal/ocilimit", "keyless", "provenance", "sigbundle", "sitelayout", "siteread", "spec", "trust"},
	"bundle/nodeconfig": {"internal/atomicfile"},
	"releaseset":        {"index", "internal/fault", "spec"},
	"sigbundle":         {"trust"},
	"keyless":           {"sigbundle"},
	"evidence":          {"index", "internal/fault", "releaseset", "spec", "trust"},
	"provenance":        {"internal/fault", "spec", "trust"},
	"sitelayout":        {"internal/dist"},
	"siteread":          {"index", "internal/addrspace", "internal/atomicfile", "internal/dist", "internal/fault", "internal/netdeadline", "sbom", "sitelayout", "spec", "trust"},
	// What changed between two builds, for reviewers (diff, bump).
	"review":  {"builder", "builder/render", "index", "internal/chartpin", "internal/fault", "internal/plainhttp", "recipe", "sources", "spec"},
	"qualify": {"evidence", "index", "internal/atomicfile", "internal/chartpin", "internal/fault", "internal/plainhttp", "sitelayout", "siteread", "spec", "trust"},
	"suite":   {"evidence", "index", "internal/atomicfile", "internal/chartpin", "internal/fault", "internal/netdeadline", "internal/ocilimit", "internal/plainhttp", "publish", "releaseset", "site", "sitelayout", "siteread", "spec", "trust"},

	// The qualification benchmarks' loop: a control plane per iteration.
	"qualify/qualifybench": {"internal/controlplane", "qualify"},
	// One job each, below the libraries that use them.
	"examples":               {},
	"internal/addrspace":     {"internal/fault"},
	"internal/atomicfile":    {},
	"internal/chartpin":      {"index", "internal/netdeadline", "internal/ocilimit", "internal/plainhttp", "spec"},
	"internal/controlplane":  {"internal/testenv"},
	"internal/dist":          {"index", "spec"},
	"internal/fault":         {},
	"internal/hint":          {},
	"internal/kbuildversion": {},
	"internal/kubepkgclient": {},
	"internal/netdeadline":   {"internal/fault"},
	"internal/ociserve":      {},
	"internal/plainhttp":     {},
	"internal/stacktest":     {"index", "internal/dist"},
	"internal/testenv":       {},
	"internal/tailbuffer":    {},
	"internal/testtree":      {},
	"internal/yamlbound":     {"internal/fault"},
	"internal/yamlscan":      {},
	"scripts/hostile":        {},
	"internal/upstreamtest":  {"internal/testenv"},
	"internal/ocilimit":      {},
	"internal/sigstoretest":  {},
}

// leaf is what the packages at the bottom of the graph may depend on
// outside the standard library and kbuild, directly or through any
// import: the semver and YAML libraries and go-containerregistry's
// reference and digest types, nothing of Helm, Kubernetes or Trivy.
var leaf = []string{
	"github.com/Masterminds/semver/v3",
	"github.com/google/go-containerregistry/pkg/name",
	"github.com/google/go-containerregistry/pkg/v1",
	"github.com/google/go-containerregistry/pkg/v1/types",
	"github.com/opencontainers/go-digest", // by pkg/name
	"go.yaml.in/yaml/v2",
	"go.yaml.in/yaml/v3",
	"sigs.k8s.io/yaml",
}

// signing is what trust adds to leaf: the Edwards25519 group of Go's own
// crypto/ed25519, published by its author, to sign an index as RFC 8032
// does while it is written instead of holding it in memory
// (trust.SignMessage).
var signing = append([]string{"filippo.io/edwards25519/..."}, leaf...)

// outside lists, for each package whose whole dependency tree is held
// small, the import paths outside the standard library and kbuild that it
// may depend on, directly or not (a path ending in "/..." allows the tree
// under it). The packages that fetch, build, review and publish (builder,
// sources, patches, recipe/draft, review, bundle, publish, suite,
// internal/chartpin, sbom/trivytest, and internal/testenv, which reads
// referrers for the end-to-end tests) depend on Helm, kyaml and the
// registry clients by design and are not held here.
var outside = map[string][]string{
	"spec":                   leaf,
	"index":                  leaf,
	"trust":                  signing,
	"recipe":                 leaf,
	"releaseset":             leaf,
	"evidence":               append([]string{"github.com/package-url/packageurl-go"}, signing...),
	"sbom":                   append([]string{"github.com/package-url/packageurl-go", "github.com/CycloneDX/cyclonedx-go", "github.com/google/uuid"}, leaf...),
	"site":                   leaf,
	"sitelayout":             leaf,
	"siteread":               append([]string{"github.com/package-url/packageurl-go", "github.com/CycloneDX/cyclonedx-go", "github.com/google/uuid"}, signing...),
	"internal/dist":          leaf,
	"internal/kubepkgclient": leaf,
	"internal/stacktest":     leaf,
	"internal/yamlbound":     {"go.yaml.in/yaml/v3"},
	"internal/addrspace":     {},
	"internal/atomicfile":    {},
	"internal/yamlscan":      leaf,
	"internal/netdeadline":   {},
	"internal/fault":         {},
	"internal/plainhttp":     {},
	"internal/tailbuffer":    {},
	"internal/ociserve":      {"github.com/google/go-containerregistry/pkg/v1", "github.com/google/go-containerregistry/pkg/v1/types"},
	"bundle/nodeconfig":      {"github.com/BurntSushi/toml/...", "go.yaml.in/yaml/v2", "sigs.k8s.io/yaml"},
	"examples":               {},
	"scripts/hostile":        {},
	"internal/ocilimit":      {},
	"sigbundle":              signing,
	"provenance":             signing,
}

// pkg is one package of the build graph as go list reports it.
type pkg struct {
	std     bool
	imports []string
}

// graph returns every package that kbuild's packages depend on, with
// their imports (test files excluded), from go list -deps.
func graph(t *testing.T) (map[string]*pkg, []string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}\t{{.Standard}}\t{{join .Imports \" \"}}", "./...")
	cmd.Dir = testenv.RepoRoot()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./...: %v\n%s", err, stderr.Bytes())
	}
	g := map[string]*pkg{}
	var own []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("go list printed %q; want path, standard and imports", line)
		}
		g[f[0]] = &pkg{std: f[1] == "true", imports: strings.Fields(f[2])}
		if rel, ok := strings.CutPrefix(f[0], module); ok {
			own = append(own, rel)
		}
	}
	slices.Sort(own)
	return g, own
}

// TestPackageGraph checks each kbuild package's kbuild imports against
// allowed, both ways: nothing imported that the table does not allow, and
// nothing allowed that is not imported.
func TestPackageGraph(t *testing.T) {
	g, own := graph(t)
	if !slices.Contains(own, "cmd/kbuild") {
		t.Fatalf("go list found no cmd/kbuild in %s", testenv.RepoRoot())
	}
	for _, p := range own {
		if strings.HasPrefix(p, "cmd/") || strings.HasPrefix(p, "bench/") || p == "internal/depcheck" {
			continue
		}
		list, known := allowed[p]
		if !known {
			t.Errorf("package %s is not in the dependency table of internal/depcheck; add it with what it may import", p)
			continue
		}
		var got []string
		for _, imp := range g[module+p].imports {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				got = append(got, rel)
			}
		}
		var bad, stale []string
		for _, d := range got {
			if !slices.Contains(list, d) {
				bad = append(bad, d)
			}
		}
		for _, a := range list {
			if !slices.Contains(got, a) {
				stale = append(stale, a)
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s imports %s, which the package graph does not allow (allowed: %v)", p, strings.Join(bad, ", "), list)
		}
		if len(stale) > 0 {
			t.Errorf("%s is allowed to import %s but does not; remove it from the table in internal/depcheck", p, strings.Join(stale, ", "))
		}
	}
	for p := range allowed {
		if !slices.Contains(own, p) {
			t.Errorf("the dependency table of internal/depcheck lists %s, which is no package of kbuild; remove it", p)
		}
	}
}

// TestTransitiveDeps checks, as go-containerregistry's depcheck does, the
// whole dependency tree of each package in outside: every package it
// reaches outside the standard library and kbuild must be listed. The
// error names the chain of imports that brings the package in.
func TestTransitiveDeps(t *testing.T) {
	g, own := graph(t)
	for p, may := range outside {
		if !slices.Contains(own, p) {
			t.Errorf("the outside table of internal/depcheck lists %s, which is no package of kbuild; remove it", p)
			continue
		}
		// Walk the tree breadth first, keeping how each package was reached.
		from := map[string]string{module + p: ""}
		queue := []string{module + p}
		var bad []string
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, imp := range g[cur].imports {
				if _, seen := from[imp]; seen {
					continue
				}
				from[imp] = cur
				q := g[imp]
				if q == nil || q.std || strings.HasPrefix(imp, module) {
					if q != nil {
						queue = append(queue, imp)
					}
					continue
				}
				if !allowedOutside(imp, may) {
					bad = append(bad, imp)
					continue // its own tree would only repeat the finding
				}
				queue = append(queue, imp)
			}
		}
		slices.Sort(bad)
		for _, b := range bad {
			chain := []string{b}
			for at := from[b]; at != ""; at = from[at] {
				chain = append(chain, strings.TrimPrefix(at, module))
			}
			slices.Reverse(chain)
			t.Errorf("%s depends on %s (%s), which its row in internal/depcheck's outside table does not allow", p, b, strings.Join(chain, " → "))
		}
	}
}

// allowedOutside reports whether path is in may: equal to an entry, or
// under an entry ending in "/...".
func allowedOutside(path string, may []string) bool {
	for _, m := range may {
		if tree, ok := strings.CutSuffix(m, "/..."); ok && (path == tree || strings.HasPrefix(path, tree+"/")) || path == m {
			return true
		}
	}
	return false
}

// formats are the packages of kbuild that internal/ may import besides
// its own: the formats at the bottom of the graph, and the names of a
// site's files.
var formats = []string{"spec", "index", "trust", "sitelayout"}

// TestInternalHoldsLeaves checks that internal/ holds only helpers below
// the libraries: each internal package imports nothing of kbuild but other
// internal packages and the formats (spec, index, trust, sitelayout), so no feature
// hides in internal/ above builder.
func TestInternalHoldsLeaves(t *testing.T) {
	g, own := graph(t)
	for _, p := range own {
		if !strings.HasPrefix(p, "internal/") {
			continue
		}
		for _, imp := range g[module+p].imports {
			rel, ok := strings.CutPrefix(imp, module)
			if ok && !strings.HasPrefix(rel, "internal/") && !slices.Contains(formats, rel) {
				t.Errorf("%s imports %s: internal/ holds helpers below the libraries; move %s out of internal/ (as review moved)", p, rel, p)
			}
		}
	}
}
