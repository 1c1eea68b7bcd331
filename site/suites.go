package site

import (
	"fmt"
	"slices"

	"kbuild.dev/kbuild/index"
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
	// Held and Withdrawn map the BuildKey of a build to the suites that
	// hold it or withdrew it. They come from each suite's verified index.
	Held, Withdrawn map[string][]string
}

// BuildKey names one build of a package by its spec digest, as the keys
// of Suites.Held and Suites.Withdrawn.
func BuildKey(name, version string, build int, digest string) string {
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
			k := BuildKey(name, v.Version, v.Build, v.Digest)
			s.Held[k] = s.insert(s.Held[k], suite)
		}
	}
	for _, w := range idx.Withdrawn {
		k := BuildKey(w.Package, w.Version, w.Build, w.Digest)
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
	k := BuildKey(name, version, build, digest)
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
