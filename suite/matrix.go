package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/releaseset"
	"kbuild.dev/kbuild/site"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// MatrixDir holds the compatibility matrix of each package and release
// set with evidence: MatrixDir/<name>.html (site.CompatDir).
const MatrixDir = site.CompatDir

// Untested is the result of a cell without evidence.
const Untested = site.Untested

// Matrix is the compatibility matrix of one package or release set: a row
// per version a suite holds, a cell per environment tested.
type Matrix = site.Matrix

// MatrixRow is one version of a Matrix.
type MatrixRow = site.MatrixRow

// MatrixCell is one result, with the evidence file relative to the site.
type MatrixCell = site.MatrixCell

// Matrices reads every suite of the site as Promote reads them and the
// evidence under <site>/evidence/, and returns the matrix of each package
// and release set a suite holds a version of with evidence, sorted by
// name. Evidence that does not verify (against the qa role of the root in
// rootFile, and the digests the suite's index pins) is not shown. A cell
// shows the lifecycle phases the evidence lists among its tests
// (site.PhasesOf), or its result alone. Without a suites file (c nil)
// the one index is the site's own, at its root: RootMatrices.
func Matrices(ctx context.Context, siteDir string, c *Config, rootFile string, now time.Time) ([]Matrix, error) {
	if c == nil {
		return RootMatrices(ctx, siteDir, rootFile, now)
	}
	var from []matrixSource
	for _, s := range c.Suites {
		from = append(from, matrixSource{suite: s.Name, dir: filepath.Join(siteDir, s.Name), policy: s.Policy})
	}
	return matrices(ctx, siteDir, from, rootFile, now)
}

// RootMatrices is Matrices for a site without suites: the rows are the
// versions the index at the site root holds, and name no suite (nor any
// "supported in", which only a suite's policy says).
func RootMatrices(ctx context.Context, siteDir string, rootFile string, now time.Time) ([]Matrix, error) {
	return matrices(ctx, siteDir, []matrixSource{{dir: siteDir}}, rootFile, now)
}

// matrixSource is one index whose versions are rows: a suite's (its name
// and policy) or the site root's (no name).
type matrixSource struct {
	suite  string
	dir    string
	policy *Policy
}

func matrices(ctx context.Context, siteDir string, from []matrixSource, rootFile string, now time.Time) ([]Matrix, error) {
	root, first, err := loadChain(rootFile)
	if err != nil {
		return nil, err
	}
	tested, err := testedDirs(siteDir)
	if err != nil || len(tested) == 0 {
		return nil, err
	}
	type held struct {
		x      *index.RepositoryIndex
		digest string
		set    bool
		suites []int // indexes into from
	}
	targets := map[evidence.Target]*held{}
	for i, s := range from {
		pub, err := siteread.ReadIndexAt(ctx, s.dir, &trust.Trust{TrustedRoot: first}, now)
		if errors.Is(err, siteread.ErrNotFound) {
			continue // nothing promoted into it yet
		}
		if err != nil {
			if s.suite == "" {
				return nil, fmt.Errorf("site %s: %w", s.dir, err)
			}
			return nil, fmt.Errorf("suite %s: %w", s.suite, err)
		}
		x := pub.Verified.Index
		sets := map[evidence.Target]string{}
		for _, sd := range x.Sets {
			sets[evidence.Target{Package: sd.Package, Version: sd.Version, Build: sd.Build}] = sd.Digest
		}
		for name, p := range x.Packages {
			if p == nil {
				continue
			}
			for _, v := range p.Versions {
				t := evidence.Target{Package: name, Version: v.Version, Build: v.Build}
				if !tested[evidenceDir(t)] {
					continue
				}
				h := targets[t]
				if h == nil {
					h = &held{x: x, digest: v.Digest}
					if d, ok := sets[t]; ok {
						h.digest, h.set = d, true
					} else if _, isSet, _ := releaseset.Members(&v.Spec); isSet {
						continue // a set the suite does not hold whole
					}
					targets[t] = h
				}
				h.suites = append(h.suites, i)
			}
		}
	}
	byName := map[string]*Matrix{}
	results := map[evidence.Target]map[string]MatrixCell{}
	for t, h := range targets {
		files, err := evidenceFiles(siteDir, t)
		if err != nil {
			return nil, err
		}
		res := map[string]MatrixCell{}
		var ev []*evidence.Verified
		for _, f := range files {
			data, err := siteread.ReadFile(f, trust.MaxEnvelopeSize)
			if err != nil {
				return nil, err
			}
			v, verr := evidence.Verify(data, root, h.x, now)
			siteread.Release(data)
			if verr != nil || v.Target != t {
				continue
			}
			ev = append(ev, v)
			rel, _ := filepath.Rel(siteDir, f)
			pr := v.Statement.Predicate
			res[evidence.EnvString(v.Env)] = MatrixCell{Result: v.Result, File: filepath.ToSlash(rel), Env: v.Env, Phases: site.PhasesOf(pr.PassedTests, pr.FailedTests)}
		}
		if len(res) == 0 {
			continue
		}
		results[t] = res
		slices.Sort(h.suites)
		row := MatrixRow{Version: t.Version, Build: t.Build, Digest: h.digest}
		for _, i := range h.suites {
			s := from[i]
			if s.suite == "" {
				continue
			}
			row.Suites = append(row.Suites, s.suite)
			if s.policy != nil && s.policy.Evaluate(t, ev) == nil {
				row.Supported = append(row.Supported, s.suite)
			}
		}
		m := byName[t.Package]
		if m == nil {
			m = &Matrix{Package: t.Package, Set: h.set}
			byName[t.Package] = m
		}
		for env := range res {
			if !slices.Contains(m.Envs, env) {
				m.Envs = append(m.Envs, env)
			}
		}
		m.Rows = append(m.Rows, row)
	}
	var out []Matrix
	for _, m := range byName {
		slices.Sort(m.Envs)
		slices.SortFunc(m.Rows, func(a, b MatrixRow) int {
			if c := compareVersions(b.Version, a.Version); c != 0 {
				return c
			}
			return b.Build - a.Build
		})
		for i := range m.Rows {
			r := &m.Rows[i]
			res := results[evidence.Target{Package: m.Package, Version: r.Version, Build: r.Build}]
			for _, env := range m.Envs {
				cell, ok := res[env]
				if !ok {
					cell = MatrixCell{Result: Untested}
				}
				r.Cells = append(r.Cells, cell)
			}
		}
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b Matrix) int { return strings.Compare(a.Package, b.Package) })
	return out, nil
}

// evidenceDir is the directory of t's evidence, relative to the site.
func evidenceDir(t evidence.Target) string {
	return path.Dir(sitelayout.EvidenceFile(t.Package, t.Version, t.Build, "x"))
}

// testedDirs returns the evidence directories of the site (relative,
// slash-separated), so that only versions with evidence are looked at.
func testedDirs(siteDir string) (map[string]bool, error) {
	entries, err := os.ReadDir(filepath.Join(siteDir, sitelayout.EvidenceDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() {
			out[sitelayout.EvidenceDir+"/"+e.Name()] = true
		}
	}
	return out, nil
}

// WriteMatrices writes each matrix to the site as MatrixDir/<name>.html
// (site.WriteMatrices, styled as the catalogs, with the suites of c;
// c nil for a site without suites, whose rows link its root catalog),
// removes the matrices of packages no longer tested, and returns the
// names whose matrix appeared or went.
func WriteMatrices(siteDir string, c *Config, title string, ms []Matrix) ([]string, error) {
	var opts []site.Option
	if c != nil {
		opts = append(opts, site.WithSuites(&site.Suites{Names: c.Names(), List: c.RootSuite != ""}))
	}
	if title != "" {
		opts = append(opts, site.WithTitle(title))
	}
	return site.WriteMatrices(siteDir, ms, opts...)
}

// Compat is what WriteCompat did.
type Compat struct {
	// Matrices are the matrices written, as files.
	Matrices []string
	// Refreshed are the suites whose pages were rewritten to link a matrix
	// that appeared or to unlink one that went.
	Refreshed []string
}

// WriteCompat writes the compatibility matrices of the site from its
// evidence (Matrices, with the root in rootFile), and when a matrix
// appeared or went, rewrites the pages that link it in every suite (the
// package's and, for a set, its members'; WithSuites' Suites.Compat) and
// the page of suites, without re-signing. Publish calls it after
// installing new evidence, promote after a promotion. Without a suites
// file (Config nil) the site's one index is at its root: the matrices
// are RootMatrices, and the pages rewritten are the root catalog's
// (its package list and the pages that link a matrix that appeared or
// went; Refreshed is then empty).
func (pg *Pages) WriteCompat(ctx context.Context, rootFile string) (*Compat, error) {
	ms, err := Matrices(ctx, pg.Site, pg.Config, rootFile, pg.Now)
	if err != nil {
		return nil, err
	}
	changed, err := WriteMatrices(pg.Site, pg.Config, pg.Title, ms)
	if err != nil {
		return nil, err
	}
	out := &Compat{}
	for _, m := range ms {
		out.Matrices = append(out.Matrices, filepath.Join(pg.Site, filepath.FromSlash(site.CompatPath(m.Package))))
	}
	if len(changed) == 0 {
		return out, nil
	}
	if pg.Config == nil {
		return out, pg.recatalogRoot(ctx, changed)
	}
	names := slices.Clone(changed)
	for _, s := range pg.Config.Names() {
		pub, err := siteread.ReadIndexAt(ctx, filepath.Join(pg.Site, s), trust.SignedBy(pg.Signers...), pg.Now)
		if err != nil {
			continue // not there yet, or Holdings warns of it
		}
		for _, sd := range pub.Verified.Index.Sets {
			if slices.Contains(changed, sd.Package) {
				for _, m := range sd.Members {
					names = append(names, m.Package)
				}
			}
		}
	}
	if out.Refreshed, err = pg.Refresh(ctx, "", names); err != nil {
		return out, err
	}
	if pg.Config.RootSuite != "" && exists(filepath.Join(pg.Site, sitelayout.IndexFile)) {
		if _, err := pg.Config.MirrorRoot(pg.Site, pg.Title); err != nil {
			return out, err
		}
	}
	return out, nil
}

// recatalogRoot rewrites the root catalog of a site without suites: its
// package list and the pages of the packages and sets changed names, and
// of the members of those sets, re-signing nothing.
func (pg *Pages) recatalogRoot(ctx context.Context, changed []string) error {
	names := slices.Clone(changed)
	pub, err := siteread.ReadIndexAt(ctx, pg.Site, trust.SignedBy(pg.Signers...), pg.Now)
	if err != nil {
		return fmt.Errorf("site %s: the pages linking the compatibility matrices of %s: %w", pg.Site, strings.Join(changed, ", "), err)
	}
	for _, sd := range pub.Verified.Index.Sets {
		if slices.Contains(changed, sd.Package) {
			for _, m := range sd.Members {
				names = append(names, m.Package)
			}
		}
	}
	p, err := publish.New(pg.options(pg.Site, nil)...)
	if err != nil {
		return err
	}
	if _, err := p.Recatalog(ctx, slices.Compact(slices.Sorted(slices.Values(names)))); err != nil {
		return fmt.Errorf("site %s: %w", pg.Site, err)
	}
	return nil
}

// loadChain reads the root in file and root version 1 beside it (the
// root itself when it is version 1).
func loadChain(file string) (root, first *trust.Root, err error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	if root, err = trust.ParseRoot(data); err != nil {
		return nil, nil, fmt.Errorf("root %s: %w", file, err)
	}
	first, err = firstRoot(root, file)
	return root, first, err
}

// firstRoot returns root version 1 of the chain of root, read from file's
// directory.
func firstRoot(root *trust.Root, file string) (*trust.Root, error) {
	if root.Signed.Version == 1 {
		return root, nil
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(file), filepath.FromSlash(sitelayout.RootVersionFile(1))))
	if err != nil {
		return nil, fmt.Errorf("root %s is version %d, and reading its chain needs %w", file, root.Signed.Version, err)
	}
	first, err := trust.ParseRoot(data)
	if err != nil {
		return nil, fmt.Errorf("root version 1: %w", err)
	}
	return first, nil
}

// compareVersions orders two set versions by semver precedence (3.10.0
// after 3.9.0, a pre-release before its release), and versions that are
// not semver after those that are, by their text.
func compareVersions(a, b string) int {
	va, erra := spec.ParseVersion(a)
	vb, errb := spec.ParseVersion(b)
	switch {
	case erra == nil && errb == nil:
		if c := va.Compare(vb); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	case erra == nil:
		return -1
	case errb == nil:
		return 1
	}
	return strings.Compare(a, b)
}
