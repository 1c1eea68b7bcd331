package suite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/internal/fetchsite"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// MatrixDir holds the compatibility matrix of each release set:
// MatrixDir/<set>.html.
const MatrixDir = "compat"

// Untested is the result of a cell without evidence.
const Untested = "untested"

// Matrix is the compatibility matrix of one release set: a row per set
// version a suite holds, a column per environment tested.
type Matrix struct {
	Set  string
	Envs []string
	Rows []MatrixRow
}

// MatrixRow is one set version.
type MatrixRow struct {
	Version string
	Build   int
	// Digest is the set digest.
	Digest string
	// Cells are by Envs.
	Cells []MatrixCell
	// Suites hold the version; Supported are those of them (after the
	// first) whose policy its evidence meets.
	Suites, Supported []string
}

// MatrixCell is one result: evidence.Pass, evidence.Fail or Untested,
// with the evidence file relative to the site.
type MatrixCell struct {
	Result string
	File   string
}

// Matrices reads every suite of the site as Promote reads them and the
// evidence, and returns the matrix of each release set a suite holds,
// sorted by name. Evidence that does not verify is not shown.
func Matrices(ctx context.Context, site string, c *Config, rootFile string, now time.Time) ([]Matrix, error) {
	root, first, err := loadChain(rootFile)
	if err != nil {
		return nil, err
	}
	type held struct {
		x      *index.RepositoryIndex
		digest string
		suites []string
	}
	sets := map[evidence.Target]*held{}
	for _, s := range c.Suites {
		pub, err := publish.ReadIndexAt(ctx, filepath.Join(site, s.Name), &trust.Trust{TrustedRoot: first}, now)
		if errors.Is(err, fetchsite.ErrNotFound) {
			continue // nothing promoted into it yet
		}
		if err != nil {
			return nil, fmt.Errorf("suite %s: %w", s.Name, err)
		}
		for _, sd := range pub.Verified.Index.Sets {
			t := evidence.Target{Package: sd.Package, Version: sd.Version, Build: sd.Build}
			h := sets[t]
			if h == nil {
				h = &held{x: pub.Verified.Index, digest: sd.Digest}
				sets[t] = h
			}
			h.suites = append(h.suites, s.Name)
		}
	}
	bySet := map[string]*Matrix{}
	results := map[evidence.Target]map[string]MatrixCell{}
	for t, h := range sets {
		files, err := evidenceFiles(site, t)
		if err != nil {
			return nil, err
		}
		res := map[string]MatrixCell{}
		var ev []*evidence.Verified
		for _, f := range files {
			data, err := fetchsite.ReadFile(f, trust.MaxEnvelopeSize)
			if err != nil {
				return nil, err
			}
			v, verr := evidence.Verify(data, root, h.x, now)
			fetchsite.Release(data)
			if verr != nil || v.Target != t {
				continue
			}
			ev = append(ev, v)
			rel, _ := filepath.Rel(site, f)
			res[evidence.EnvString(v.Env)] = MatrixCell{Result: v.Result, File: filepath.ToSlash(rel)}
		}
		results[t] = res
		row := MatrixRow{Version: t.Version, Build: t.Build, Digest: h.digest, Suites: h.suites}
		for _, name := range h.suites {
			if p := c.Suites[c.Index(name)].Policy; p != nil && p.Evaluate(t, ev) == nil {
				row.Supported = append(row.Supported, name)
			}
		}
		m := bySet[t.Package]
		if m == nil {
			m = &Matrix{Set: t.Package}
			bySet[t.Package] = m
		}
		for env := range res {
			if !slices.Contains(m.Envs, env) {
				m.Envs = append(m.Envs, env)
			}
		}
		m.Rows = append(m.Rows, row)
	}
	var out []Matrix
	for _, m := range bySet {
		slices.Sort(m.Envs)
		slices.SortFunc(m.Rows, func(a, b MatrixRow) int {
			if c := compareVersions(b.Version, a.Version); c != 0 {
				return c
			}
			return b.Build - a.Build
		})
		for i := range m.Rows {
			r := &m.Rows[i]
			res := results[evidence.Target{Package: m.Set, Version: r.Version, Build: r.Build}]
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
	slices.SortFunc(out, func(a, b Matrix) int { return strings.Compare(a.Set, b.Set) })
	return out, nil
}

var matrixPage = template.Must(template.New("matrix").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Set}}: compatibility</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em}
.pass{background:#d4f7d4}.fail{background:#f7d4d4}.untested{color:#888}.badge{background:#2a7;color:#fff;border-radius:.3em;padding:0 .4em}</style></head>
<body><h1>{{.Set}}: compatibility</h1>
<table><thead><tr><th>version</th><th>suites</th>{{range .Envs}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Version}} build {{.Build}}<br><small>{{.Digest}}</small></td><td>{{range .Suites}}{{.}} {{end}}{{range .Supported}}<span class="badge">supported in {{.}}</span> {{end}}</td>{{range .Cells}}<td class="{{.Result}}">{{if .File}}<a href="../{{.File}}">{{.Result}}</a>{{else}}{{.Result}}{{end}}</td>{{end}}</tr>
{{end}}</tbody></table></body></html>
`))

// WriteMatrices writes each matrix to the site as MatrixDir/<set>.html,
// through a temporary file and a rename, and returns the files written.
func WriteMatrices(site string, ms []Matrix) ([]string, error) {
	var files []string
	for _, m := range ms {
		var b bytes.Buffer
		if err := matrixPage.Execute(&b, m); err != nil {
			return nil, err
		}
		p := filepath.Join(site, MatrixDir, m.Set+".html")
		if err := atomicfile.WriteFile(p, b.Bytes(), 0o644); err != nil {
			return nil, err
		}
		files = append(files, p)
	}
	return files, nil
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
