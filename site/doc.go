// Package site writes the static HTML catalog that GitHub Pages serves next
// to a repository's index.yaml, and serves a written site over HTTP for
// `kbuild serve`.
//
// The catalog is made from the already verified index alone, plus what the
// caller says was published beside it (SBOMs, provenance, scan report,
// chart manifest digests). Output is deterministic: lists are sorted, dates
// are absolute UTC times taken from the index, never from the clock. Every
// link is relative, so the site works under a Pages sub-path such as
// https://org.github.io/repo/. Pages need no JavaScript; the optional
// search.js adds a filter box, relative expiry times and copy buttons.
// WriteMatrices writes the compatibility matrices (compat/<name>.html at
// the root of a site with suites) from results the caller verified.
//
// The package imports nothing of kbuild but index.
package site
