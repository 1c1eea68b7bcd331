package site

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
)

// Suites is what the catalog of one suite of a repository says about all
// of its suites: on each package page, every version and every withdrawn
// version carries a badge per suite that holds that exact build (same
// spec digest) and per suite that withdrew it, linking to that suite's
// page of the package.
type Suites struct {
	// This is the suite whose catalog is written. What it holds and
	// withdrew is read from the index given to Write, not from Held and
	// Withdrawn.
	This string
	// Names are the repository's suites, in the order versions move
	// through them (unstable, testing, stable); badges follow it.
	Names []string
	// Held and Withdrawn map a build (its name, version, build number and
	// spec digest) to the suites that hold it or withdrew it, filled by Add
	// from each suite's verified index.
	Held, Withdrawn map[string][]string
	// List is whether the site root has the page of suites (WriteSuites):
	// every page then links it.
	List bool
	// Compat names the packages and release sets that have a
	// compatibility matrix at the site root (WriteMatrices): their pages,
	// and those of a set's members, link it.
	Compat []string
}

// buildKey names one build of a package by its spec digest, as the keys
// of Suites.Held and Suites.Withdrawn.
func buildKey(name, version string, build int, digest string) string {
	return fmt.Sprintf("%s\x00%s\x00%d\x00%s", name, version, build, digest)
}

// Add records that suite holds (withdrawn false) or withdrew every build
// of idx, keeping Names' order.
func (s *Suites) Add(suite string, idx *index.RepositoryIndex) {
	if s.Held == nil {
		s.Held = map[string][]string{}
	}
	if s.Withdrawn == nil {
		s.Withdrawn = map[string][]string{}
	}
	for name, p := range idx.Packages {
		if p == nil {
			continue
		}
		for _, v := range p.Versions {
			k := buildKey(name, v.Version, v.Build, v.Digest)
			s.Held[k] = s.insert(s.Held[k], suite)
		}
	}
	for _, w := range idx.Withdrawn {
		k := buildKey(w.Package, w.Version, w.Build, w.Digest)
		s.Withdrawn[k] = s.insert(s.Withdrawn[k], suite)
	}
}

// insert adds suite to list, ordered as Names.
func (s *Suites) insert(list []string, suite string) []string {
	if slices.Contains(list, suite) {
		return list
	}
	list = append(list, suite)
	slices.SortStableFunc(list, func(a, b string) int { return s.rank(a) - s.rank(b) })
	return list
}

func (s *Suites) rank(suite string) int {
	if i := slices.Index(s.Names, suite); i >= 0 {
		return i
	}
	return len(s.Names)
}

// WithSuites makes the catalog one suite's of several (s.This): each
// version on a package page says which suites hold that build and which
// withdrew it. The default is none: a repository without suites.
func WithSuites(s *Suites) Option {
	return func(o *options) { o.suites = s }
}

// suiteBadge is one suite on a version: Class is "suite" or "suite
// withdrawn"; Href links to that suite's page of the package (empty for
// the page's own suite).
type suiteBadge struct {
	Class, Text, Href string
}

// badges returns the suite badges of one build on the page of package
// name: held says whether the index written holds it, withdrawn whether
// it withdrew it.
func (o *options) badges(name, version string, build int, digest string, held, withdrawn bool) []suiteBadge {
	s := o.suites
	if s == nil {
		return nil
	}
	k := buildKey(name, version, build, digest)
	id := fmt.Sprintf("#v%s-%d", version, build)
	var out []suiteBadge
	for _, n := range s.Names {
		href := "../../" + n + "/" + PagePath(name)
		has, gone := slices.Contains(s.Held[k], n), slices.Contains(s.Withdrawn[k], n)
		if n == s.This {
			href, has, gone = "", held, withdrawn
		}
		switch {
		case has:
			if href != "" {
				href += id
			}
			out = append(out, suiteBadge{Class: "suite", Text: n, Href: href})
		case gone:
			out = append(out, suiteBadge{Class: "suite withdrawn", Text: "withdrawn in " + n, Href: href})
		}
	}
	return out
}

// SuiteRow is one suite on the page of a site's suites (WriteSuites).
type SuiteRow struct {
	// Name is the suite; Policy says in words what enters it.
	Name, Policy string
	// AtRoot is whether the site root serves this suite's index too.
	AtRoot bool
	// NoIndex is set for a suite with no index yet (nothing promoted into
	// it): the page names it without linking a catalog or an index that
	// would not be found.
	NoIndex bool
}

type suitesPage struct {
	page
	Suites []suiteRowView
	// KeyHref links the public key beside the first suite with an index.
	KeyHref string
	// Compat links the compatibility matrices (WithCompat).
	Compat []link
}

type suiteRowView struct {
	Name, Href, Index, Policy string
	AtRoot, NoIndex           bool
	// Subscribe is the kubepkg repo add command of the suite's index
	// (its URL completed by search.js from Index).
	Subscribe string
}

// WriteSuites writes the page of a site's suites, index.html at the site
// root dir, with style.css, search.js and favicon.svg: a row per suite
// linking its catalog (<suite>/index.html) and index. idx is the index the
// site root serves (its generated and expiry times are shown), or nil
// when it serves none. WithTitle and WithPublished apply. Each file is
// written through a temporary file and a rename.
func WriteSuites(dir string, idx *index.RepositoryIndex, rows []SuiteRow, opts ...Option) error {
	o := &options{title: "kubepkg repository", published: map[string]bool{}, manifests: map[string]string{}}
	for _, opt := range opts {
		opt(o)
	}
	p := page{Title: "Suites · " + o.title, Repository: o.title}
	if idx != nil {
		p = newPage(idx, o, p.Title, "")
	}
	sp := suitesPage{page: p}
	for _, n := range slices.Sorted(slices.Values(o.compat)) {
		if index.CheckPackageName(n) == nil {
			sp.Compat = append(sp.Compat, link{Href: CompatPath(n), Text: n})
		}
	}
	for _, r := range rows {
		if err := index.CheckPackageName(r.Name); err != nil {
			return fmt.Errorf("site %s: suite: %w", dir, err)
		}
		rv := suiteRowView{Name: r.Name, Href: r.Name + "/index.html", Index: r.Name + "/index.yaml", Policy: r.Policy, AtRoot: r.AtRoot, NoIndex: r.NoIndex,
			Subscribe: "kubepkg repo add " + yamlName(o.title) + "-" + r.Name + " "}
		sp.Suites = append(sp.Suites, rv)
		if sp.KeyHref == "" && !r.NoIndex {
			sp.KeyHref = r.Name + "/keys/index.pub"
		}
	}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "suites.html", sp); err != nil {
		return fmt.Errorf("site %s: index.html: %w", dir, err)
	}
	files := map[string][]byte{"index.html": buf.Bytes()}
	for _, f := range staticFiles {
		b, err := staticFS.ReadFile("assets/" + f)
		if err != nil {
			return fmt.Errorf("site %s: %s: %w", dir, f, err)
		}
		files[f] = b
	}
	for _, f := range append([]string{"index.html"}, staticFiles...) {
		if err := atomicfile.WriteFile(filepath.Join(dir, f), files[f], 0o644); err != nil {
			return fmt.Errorf("site %s: %w", dir, err)
		}
	}
	return nil
}
