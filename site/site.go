package site

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
)

// Option configures Write.
type Option func(*options)

type options struct {
	title         string
	baseURL       string
	published     map[string]bool
	manifests     map[string]string
	publicKeys    []string
	rootKeys      []string
	rootThreshold int
	pages         map[string]bool // nil: every package's page
	counts        map[string]int
	suites        *Suites
	referrers     bool
	compat        []string
	keyless       [3]string // issuer, subject, repository
}

// WithPages limits the package pages Write writes to those of the packages
// named (index.html still lists every package): a publish rewrites only
// the pages of packages it changed, the others being in the site already.
// It may be given more than once.
func WithPages(names ...string) Option {
	return func(o *options) {
		if o.pages == nil {
			o.pages = map[string]bool{}
		}
		for _, n := range names {
			o.pages[n] = true
		}
	}
}

// WithVersionCounts gives the number of versions of packages whose index
// entry holds only their newest version (a summary): index.html shows the
// count given here instead of the versions present.
func WithVersionCounts(counts map[string]int) Option {
	return func(o *options) {
		if o.counts == nil {
			o.counts = map[string]int{}
		}
		for k, v := range counts {
			o.counts[k] = v
		}
	}
}

// WithReferrers says that the SBOM and provenance of every version are
// OCI referrers of its charts in the registry: a version shown in full
// whose SBOM the site does not hold (WithPublished) names the charts to
// list them from (oras discover), and a page with versions not shown in
// full says where theirs are. The default is to say nothing of the
// registry.
func WithReferrers() Option { return func(o *options) { o.referrers = true } }

// WithTitle sets the repository's name, shown in page titles and headers
// and used as the name of the kubepkg Repository object in snippets. The
// default is "kubepkg repository".
func WithTitle(title string) Option {
	return func(o *options) { o.title = title }
}

// WithPublished names files published in the site beside the catalog, as
// slash-separated paths relative to the site root: index.yaml.sig,
// root.yaml, scan.json, sbom/<package>-<version>-<build>.cdx.json and
// provenance/<package>-<version>-<build>.intoto.json. The catalog links a
// file of these kinds only when it is named here (index.yaml, which the
// catalog sits beside, is always linked). The default is none. It may be
// given more than once.
func WithPublished(files ...string) Option {
	return func(o *options) {
		for _, f := range files {
			o.published[f] = true
		}
	}
}

// WithManifestDigests gives the OCI manifest digest each chart was pushed
// as, keyed by the chart archive digest (both sha256:<hex>), as the build
// info records them. A chart with a known manifest digest gets the
// by-digest reference and install command; the archive digest alone cannot
// address a registry. The default is none. It may be given more than once.
func WithManifestDigests(m map[string]string) Option {
	return func(o *options) {
		for k, v := range m {
			o.manifests[k] = v
		}
	}
}

// WithPublicKeys gives the PEM public keys that sign index.yaml, inlined
// in the kubepkg Repository snippet as spec.publicKeys so that a pasted
// snippet trusts exactly them. The default is none: the snippet then
// says where to put the keys.
func WithPublicKeys(pems ...string) Option {
	return func(o *options) { o.publicKeys = append(o.publicKeys, pems...) }
}

// WithRootKeys gives the PEM keys of version 1 of the repository's root of
// trust and how many must have signed it; the Repository snippet then
// pins them (spec.trust) instead of publicKeys.
func WithRootKeys(threshold int, pems ...string) Option {
	return func(o *options) { o.rootThreshold, o.rootKeys = threshold, append(o.rootKeys, pems...) }
}

// WithKeyless says the charts are also signed keylessly, with
// certificates issued to subject by the OIDC issuer (in GitHub Actions,
// for a job of repository ORG/REPO; "" if not known): the Flux snippets
// then verify with verify.matchOIDCIdentity pinning exactly them (no
// Secret to create), and each chart pinned by digest gets the cosign
// verify line with --certificate-identity and --certificate-oidc-issuer
// (and --certificate-github-workflow-repository). The default is
// key-based snippets only.
func WithKeyless(issuer, subject, repository string) Option {
	return func(o *options) { o.keyless = [3]string{issuer, subject, repository} }
}

//go:embed assets/*.html
var templateFS embed.FS

//go:embed assets/style.css assets/search.js assets/favicon.svg
var staticFS embed.FS

// staticFiles are copied from assets/ to the site root as they are.
var staticFiles = []string{"style.css", "search.js", "favicon.svg"}

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"join": strings.Join,
}).ParseFS(templateFS, "assets/*.html"))

// PagePath is the path of package name's page, relative to the site root.
func PagePath(name string) string { return "packages/" + name + ".html" }

// Files returns the paths, relative to the site root and slash-separated,
// that Write writes for idx: the same set for the same package names.
func Files(idx *index.RepositoryIndex) []string {
	files := []string{"index.html"}
	files = append(files, staticFiles...)
	for _, name := range sortedNames(idx) {
		files = append(files, PagePath(name))
	}
	sort.Strings(files)
	return files
}

// Write writes the catalog for idx, an index already verified, into dir
// next to index.yaml: index.html, packages/<name>.html for each package,
// style.css, search.js and favicon.svg, and with WithRootKeys the root
// keys as keys/root-key-<n>.pub, which the kubepkg repo add command names. Versions are shown newest first
// whatever their order in idx, which Write does not modify. Each file is
// written to a temporary file and renamed into place, so a reader never
// sees a partial page; Write removes nothing, including pages of packages
// no longer in idx. The output depends only on idx and the options.
func Write(dir string, idx *index.RepositoryIndex, opts ...Option) error {
	o := &options{title: "kubepkg repository", published: map[string]bool{}, manifests: map[string]string{}}
	for _, opt := range opts {
		opt(o)
	}
	if idx == nil {
		return fmt.Errorf("site %s: no index given", dir)
	}
	for name := range idx.Packages {
		if err := index.CheckPackageName(name); err != nil {
			return fmt.Errorf("site %s: %w; refusing to write a page for it", dir, err)
		}
	}
	idx = sortedCopy(idx)
	files := map[string][]byte{}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "index.html", newIndexPage(idx, o)); err != nil {
		return fmt.Errorf("site %s: index.html: %w", dir, err)
	}
	files["index.html"] = bytes.Clone(buf.Bytes())
	for _, name := range sortedNames(idx) {
		if o.pages != nil && !o.pages[name] {
			continue
		}
		buf.Reset()
		if err := templates.ExecuteTemplate(&buf, "package.html", newPackagePage(idx, name, o)); err != nil {
			return fmt.Errorf("site %s: package %s: %w", dir, name, err)
		}
		files[PagePath(name)] = bytes.Clone(buf.Bytes())
	}
	for _, f := range staticFiles {
		b, err := staticFS.ReadFile("assets/" + f)
		if err != nil {
			return fmt.Errorf("site %s: %s: %w", dir, f, err)
		}
		files[f] = b
	}
	names := Files(idx)
	for i, k := range o.rootKeys {
		files[rootKeyFile(i)] = []byte(strings.TrimRight(k, "\n") + "\n")
		names = append(names, rootKeyFile(i))
	}
	for _, f := range names {
		if files[f] == nil {
			continue // a page not asked for (WithPages)
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, filepath.FromSlash(f)), files[f], 0o644); err != nil {
			return fmt.Errorf("site %s: %w", dir, err)
		}
	}
	return nil
}

// sortedCopy returns a copy of idx with every package's versions newest
// first, leaving idx as it was. A nil package becomes an empty one.
func sortedCopy(idx *index.RepositoryIndex) *index.RepositoryIndex {
	c := *idx
	c.Packages = make(map[string]*index.IndexPackage, len(idx.Packages))
	for name, p := range idx.Packages {
		cp := &index.IndexPackage{}
		if p != nil {
			*cp = *p
			cp.Versions = slices.Clone(p.Versions)
		}
		c.Packages[name] = cp
	}
	// A package whose every version was withdrawn keeps its page, which
	// says so.
	for _, w := range idx.Withdrawn {
		if c.Packages[w.Package] == nil {
			c.Packages[w.Package] = &index.IndexPackage{}
		}
	}
	c.SortVersions()
	return &c
}

func sortedNames(idx *index.RepositoryIndex) []string {
	names := make([]string, 0, len(idx.Packages))
	for name := range idx.Packages {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
