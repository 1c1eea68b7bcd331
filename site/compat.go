package site

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
)

// CompatDir holds the compatibility matrices at the site root, one page
// per package or release set with test evidence: CompatDir/<name>.html.
const CompatDir = "compat"

// CompatPath is the path of name's compatibility matrix, relative to the
// site root.
func CompatPath(name string) string { return CompatDir + "/" + name + ".html" }

// Matrix is the compatibility matrix of one package or release set: a row
// per version a suite holds, and in it a cell per environment tested
// (Envs, the same for every row, so an environment one build was tested
// in and another was not shows as untested).
type Matrix struct {
	Package string
	// Set is whether Package is a release set (its evidence covers every
	// member's exact digests).
	Set bool
	// Envs are the environments, as "arch=amd64,kubernetes=1.33,…",
	// sorted.
	Envs []string
	Rows []MatrixRow
}

// MatrixRow is one version.
type MatrixRow struct {
	Version string
	Build   int
	// Digest is the set digest of a set, else the spec digest.
	Digest string
	// Cells are by Matrix.Envs.
	Cells []MatrixCell
	// Suites hold the version; Supported are those of them whose policy
	// its evidence meets.
	Suites, Supported []string
}

// MatrixCell is one environment's result: Pass, Fail or Untested.
type MatrixCell struct {
	Result string
	// File is the evidence, a site path; empty when untested.
	File string
	// Env is the environment tested (kubernetes as MAJOR.MINOR, arch, and
	// any other key).
	Env map[string]string
	// Phases are what the evidence says passed and failed among the
	// lifecycle phases (install, upgrade, rollback, uninstall), in that
	// order; none when its tests name no phase, and the result alone is
	// shown.
	Phases []Phase
}

// Phase is one lifecycle phase of a test run: Name is the test's name as
// the evidence gives it ("upgrade from 3.14.0").
type Phase struct {
	Name   string
	Passed bool
}

// Untested is the result of a cell without evidence.
const Untested = "untested"

// Phases are the lifecycle phases a matrix shows, in the order a test run
// goes through them.
var Phases = []string{"install", "upgrade", "rollback", "uninstall"}

// PhasesOf picks the lifecycle phases out of a test run's passed and
// failed tests: a test is a phase when its first word is one of Phases
// ("upgrade from 3.14.0" is the upgrade). They come in Phases' order,
// each test once, a failure where one test is listed both ways.
func PhasesOf(passed, failed []string) []Phase {
	var out []Phase
	for _, ph := range Phases {
		match := func(t string) bool { w, _, _ := strings.Cut(t, " "); return w == ph }
		var names []string
		for _, t := range passed {
			if match(t) {
				names = append(names, t)
			}
		}
		for _, t := range failed {
			if match(t) {
				names = append(names, t)
			}
		}
		slices.Sort(names)
		for _, n := range slices.Compact(names) {
			out = append(out, Phase{Name: n, Passed: !slices.Contains(failed, n)})
		}
	}
	return out
}

type compatPage struct {
	page
	Package   string
	Set       bool
	Rows      []compatRowView
	HasOthers bool
	// CatalogHref links the catalog of a site without suites.
	CatalogHref string
}

type compatRowView struct {
	ID, Version string
	Build       int
	Digest      string
	// PageHref links the version on its package page, in a site without
	// suites (whose rows name none).
	PageHref  string
	Suites    []suiteBadge
	Supported []string
	Cells     []compatCellView
}

type compatCellView struct {
	Kubernetes, Arch, Others string
	Result, Href             string
	Phases                   []Phase
}

// WriteMatrices writes each matrix to CompatDir/<name>.html under the site
// root dir, styled as the catalogs (style.css, search.js and favicon.svg
// are written at the root too), and removes the pages of packages no
// longer in ms. Rows link the suites' pages of the version, cells the
// evidence. WithTitle applies, and WithSuites for the order of suites
// (its Names); without WithSuites the site has no suites, and rows link
// the version on the package page of the catalog at the site root. It
// returns the names whose page was created or removed:
// the pages that link matrices (package pages, the page of suites) need
// rewriting for those only. Each file is written through a temporary
// file and a rename.
func WriteMatrices(dir string, ms []Matrix, opts ...Option) (changed []string, err error) {
	o := &options{title: "kubepkg repository", published: map[string]bool{}, manifests: map[string]string{}}
	for _, opt := range opts {
		opt(o)
	}
	old, err := ListMatrices(dir)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	var names []string
	for _, m := range ms {
		if err := index.CheckPackageName(m.Package); err != nil {
			return nil, fmt.Errorf("site %s: compatibility matrix: %w", dir, err)
		}
		var b bytes.Buffer
		if err := templates.ExecuteTemplate(&b, "compat.html", newCompatPage(m, o)); err != nil {
			return nil, fmt.Errorf("site %s: %s: %w", dir, CompatPath(m.Package), err)
		}
		files[CompatPath(m.Package)] = b.Bytes()
		names = append(names, m.Package)
	}
	if len(ms) > 0 {
		for _, f := range staticFiles {
			b, err := staticFS.ReadFile("assets/" + f)
			if err != nil {
				return nil, fmt.Errorf("site %s: %s: %w", dir, f, err)
			}
			files[f] = b
		}
	}
	for _, f := range slices.Sorted(maps.Keys(files)) {
		if err := atomicfile.WriteFile(filepath.Join(dir, filepath.FromSlash(f)), files[f], 0o644); err != nil {
			return nil, fmt.Errorf("site %s: %w", dir, err)
		}
	}
	for _, n := range old {
		if !slices.Contains(names, n) {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(CompatPath(n)))); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("site %s: %w", dir, err)
			}
			changed = append(changed, n)
		}
	}
	for _, n := range names {
		if !slices.Contains(old, n) {
			changed = append(changed, n)
		}
	}
	slices.Sort(changed)
	return changed, nil
}

// ListMatrices returns the names of the compatibility matrices under the
// site root dir, sorted; none when it has no CompatDir.
func ListMatrices(dir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, CompatDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("site %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".html")
		if ok && e.Type().IsRegular() && index.CheckPackageName(name) == nil {
			out = append(out, name)
		}
	}
	return out, nil
}

func newCompatPage(m Matrix, o *options) compatPage {
	p := page{
		Title:      m.Package + " compatibility · " + o.title,
		Repository: o.title,
		Root:       "../",
		Banner:     "Test results from evidence signed by the root's qa role; evidence that does not verify is not shown.",
	}
	var suites []string
	for _, r := range m.Rows {
		for _, s := range r.Suites {
			if !slices.Contains(suites, s) {
				suites = append(suites, s)
			}
		}
	}
	if o.suites != nil {
		slices.SortStableFunc(suites, func(a, b string) int { return o.suites.rank(a) - o.suites.rank(b) })
		if o.suites.List {
			p.AllSuitesHref = "../index.html"
		}
	}
	for _, s := range suites {
		p.Links = append(p.Links, link{Href: "../" + s + "/index.html", Text: s})
	}
	cp := compatPage{page: p, Package: m.Package, Set: m.Set}
	if o.suites == nil {
		// A site without suites: its one catalog is at the site root.
		cp.CatalogHref = "../index.html"
		p.Links = append(p.Links, link{Href: "../index.html", Text: "all packages"}, link{Href: "../index.yaml", Text: "index.yaml"})
		cp.page = p
	}
	for _, r := range m.Rows {
		id := fmt.Sprintf("v%s-%d", r.Version, r.Build)
		rv := compatRowView{ID: id, Version: r.Version, Build: r.Build, Digest: r.Digest, Supported: r.Supported}
		if o.suites == nil {
			rv.PageHref = "../" + PagePath(m.Package) + "#" + id
		}
		for _, s := range r.Suites {
			rv.Suites = append(rv.Suites, suiteBadge{Class: "suite", Text: s, Href: "../" + s + "/" + PagePath(m.Package) + "#" + id})
		}
		for i, c := range r.Cells {
			env := c.Env
			if env == nil && i < len(m.Envs) {
				env = parseEnv(m.Envs[i])
			}
			cv := compatCellView{Kubernetes: env["kubernetes"], Arch: env["arch"], Result: c.Result, Phases: c.Phases}
			var others []string
			for _, k := range slices.Sorted(maps.Keys(env)) {
				if k != "kubernetes" && k != "arch" {
					others = append(others, k+"="+env[k])
				}
			}
			cv.Others = strings.Join(others, ", ")
			cp.HasOthers = cp.HasOthers || cv.Others != ""
			if c.File != "" {
				cv.Href = "../" + c.File
			}
			rv.Cells = append(rv.Cells, cv)
		}
		cp.Rows = append(cp.Rows, rv)
	}
	return cp
}

// parseEnv reads "k=v,k=v".
func parseEnv(s string) map[string]string {
	env := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// WithCompat names the packages and release sets that have a
// compatibility matrix at the site root (WriteMatrices), for the page of
// suites (WriteSuites), which lists them, and for the catalog of a site
// without suites (Write without WithSuites), whose package list, package
// pages and set pages link them. A suite's catalog reads them from
// WithSuites instead (Suites.Compat). The default is none.
func WithCompat(names ...string) Option {
	return func(o *options) { o.compat = append(o.compat, names...) }
}

// compatNames returns the packages and release sets with a
// compatibility matrix that the catalog's pages link, and the path from
// the catalog's root to the site root, where the matrices are: in a
// suite's catalog (WithSuites) Suites.Compat, one directory up; in a
// site without suites (no WithSuites) WithCompat's names, beside the
// catalog. The catalog of no particular suite links none.
func (o *options) compatNames() (names []string, up string) {
	if s := o.suites; s != nil {
		if s.This == "" {
			return nil, ""
		}
		return s.Compat, "../"
	}
	return o.compat, ""
}

// compatHref is the link from a page at root (its path to the catalog's
// root) to name's matrix, when it has one.
func (o *options) compatHref(name, root string) (string, bool) {
	names, up := o.compatNames()
	if !slices.Contains(names, name) {
		return "", false
	}
	return root + up + CompatPath(name), true
}

// compatList links every matrix from the catalog's package list (root
// ""), sorted.
func compatList(o *options) []link {
	names, up := o.compatNames()
	var out []link
	for _, n := range slices.Sorted(slices.Values(names)) {
		if index.CheckPackageName(n) == nil {
			out = append(out, link{Href: up + CompatPath(n), Text: n})
		}
	}
	return out
}

// compatLinks are the matrices the page of package name links: its own
// and those of the sets of idx that pin one of its builds, when they
// exist (Suites.Compat, or WithCompat without suites), relative to a page
// at root.
func compatLinks(idx *index.RepositoryIndex, name string, o *options, root string) []link {
	var out []link
	if href, ok := o.compatHref(name, root); ok {
		out = append(out, link{Href: href, Text: name})
	}
	var sets []string
	for _, sd := range idx.Sets {
		if sd.Package == name || slices.Contains(sets, sd.Package) {
			continue
		}
		if _, ok := o.compatHref(sd.Package, root); !ok {
			continue
		}
		if slices.ContainsFunc(sd.Members, func(m index.SetMember) bool { return m.Package == name }) {
			sets = append(sets, sd.Package)
		}
	}
	slices.Sort(sets)
	for _, set := range sets {
		href, _ := o.compatHref(set, root)
		out = append(out, link{Href: href, Text: "release set " + set})
	}
	return out
}
