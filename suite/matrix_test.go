package suite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/trust"
)

// TestMatrix: a matrix per package and release set with evidence, rows
// the versions the suites hold, a cell per environment tested, each with
// its result, evidence file and the phases it lists; "supported" only
// where a suite's policy is met; evidence not signed by qa is not shown.
func TestMatrix(t *testing.T) {
	r := newRepo(t, append(all, "pulp-3.73.0-2", "foreman-stack-3.15.0-2")...)
	r.attest(r.x, stack, evidence.Pass, "kubernetes=1.33,arch=amd64", gen.AddDate(0, 1, 0), r.qa)
	r.attest(r.x, stack, evidence.Fail, "kubernetes=1.34,arch=arm64", gen.AddDate(0, 1, 0), r.qa)
	r.attest(r.x, stack, evidence.Pass, "kubernetes=1.32,arch=amd64", gen.AddDate(0, 1, 0), r.idx) // not qa: not shown
	r.attest(r.x, foreman, evidence.Pass, "kubernetes=1.33,arch=amd64,runtime=containerd", gen.AddDate(0, 1, 0), r.qa)
	if _, err := r.promote("testing", stack, gen); err != nil {
		t.Fatal(err)
	}
	unwriteCompat(t, r)
	ms, err := Matrices(context.Background(), r.site, r.cfg, r.rootFile, gen)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Package != "foreman" || ms[0].Set || ms[1].Package != "foreman-stack" || !ms[1].Set ||
		strings.Join(ms[1].Envs, " ") != "arch=amd64,kubernetes=1.33 arch=arm64,kubernetes=1.34" {
		t.Fatalf("matrices = %+v", ms)
	}
	if f := ms[0]; len(f.Rows) != 1 || strings.Join(f.Rows[0].Suites, ",") != "unstable,testing" || f.Rows[0].Cells[0].Env["runtime"] != "containerd" {
		t.Fatalf("foreman's matrix = %+v", f)
	}
	rows := ms[1].Rows
	// Build 3 pins a candlepin that is not published: not a whole set.
	// Build 2 has no evidence: no row.
	if len(rows) != 1 || rows[0].Build != 1 {
		t.Fatalf("rows = %+v", rows)
	}
	b1 := rows[0]
	if strings.Join(b1.Suites, ",") != "unstable,testing" || strings.Join(b1.Supported, ",") != "testing" || b1.Cells[0].Result != evidence.Pass || b1.Cells[1].Result != evidence.Fail ||
		b1.Cells[0].File != "evidence/foreman-stack-3.15.0-1/arch=amd64,kubernetes=1.33.intoto.json" {
		t.Fatalf("build 1 = %+v", b1)
	}
	if got := fmt.Sprint(b1.Cells[0].Phases, b1.Cells[1].Phases); got != "[{install true} {upgrade true} {rollback true}] [{upgrade false}]" {
		t.Errorf("phases = %s", got)
	}
	changed, err := WriteMatrices(r.site, r.cfg, "", ms)
	if err != nil || strings.Join(changed, ",") != "foreman,foreman-stack" {
		t.Fatalf("WriteMatrices = %v, %v; want both new", changed, err)
	}
	page, err := os.ReadFile(filepath.Join(r.site, "compat", "foreman-stack.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<link rel="stylesheet" href="../style.css">`,
		`<span class="badge set">release set</span>`,
		`<span class="badge suite"><a href="../testing/packages/foreman-stack.html#v3.15.0-1">testing</a></span> <span class="badge supported">supported in testing</span>`,
		`<tr class="result-pass"><td data-label="Kubernetes">1.33</td><td data-label="Arch">amd64</td><td data-label="Result"><span class="badge result pass"><a href="../evidence/foreman-stack-3.15.0-1/arch=amd64,kubernetes=1.33.intoto.json">pass</a></span></td><td data-label="Phases"><span class="badge phase passed">install ✓</span> <span class="badge phase passed">upgrade ✓</span> <span class="badge phase passed">rollback ✓</span> </td></tr>`,
		`<tr class="result-fail"><td data-label="Kubernetes">1.34</td><td data-label="Arch">arm64</td><td data-label="Result"><span class="badge result fail"><a href="../evidence/foreman-stack-3.15.0-1/arch=arm64,kubernetes=1.34.intoto.json">fail</a></span></td><td data-label="Phases"><span class="badge phase failed">upgrade ✗</span> </td></tr>`,
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("matrix page lacks %s:\n%s", want, page)
		}
	}
	if _, err := os.Stat(filepath.Join(r.site, "style.css")); err != nil {
		t.Errorf("the matrices' style sheet: %v", err)
	}
	// A second write changes no link; a package that lost its evidence
	// loses its page.
	if changed, err := WriteMatrices(r.site, r.cfg, "", ms[1:]); err != nil || strings.Join(changed, ",") != "foreman" {
		t.Errorf("WriteMatrices without foreman = %v, %v", changed, err)
	}
	if _, err := os.Stat(filepath.Join(r.site, "compat", "foreman.html")); !os.IsNotExist(err) {
		t.Errorf("foreman's matrix is still there: %v", err)
	}
}

// TestWriteCompat: the matrices are linked from the set's page, its
// members' pages in every suite, and the page of suites.
func TestWriteCompat(t *testing.T) {
	r := newRepo(t, all...)
	r.attest(r.x, stack, evidence.Pass, "kubernetes=1.33,arch=amd64", gen.AddDate(0, 1, 0), r.qa)
	if _, err := r.promote("testing", stack, gen); err != nil {
		t.Fatal(err)
	}
	unwriteCompat(t, r)
	r.cfg.RootSuite = "unstable"
	if _, err := r.cfg.MirrorRoot(r.site, ""); err != nil {
		t.Fatal(err)
	}
	pg := &Pages{Site: r.site, Config: r.cfg, Signers: []trust.Signer{r.idx}, Root: r.rootFile, Now: gen}
	out, err := pg.WriteCompat(context.Background(), r.rootFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Matrices) != 1 || strings.Join(out.Refreshed, ",") != "unstable,testing" {
		t.Fatalf("WriteCompat = %+v", out)
	}
	for file, want := range map[string]string{
		"testing/packages/foreman-stack.html":  `<a href="../../compat/foreman-stack.html">foreman-stack</a>`,
		"unstable/packages/foreman-stack.html": `<a href="../../compat/foreman-stack.html#v3.15.0-1">Test evidence and compatibility of this version</a>`,
		"testing/packages/foreman.html":        `<a href="../../compat/foreman-stack.html">release set foreman-stack</a>`,
		"unstable/packages/pulp.html":          `<a href="../../compat/foreman-stack.html">release set foreman-stack</a>`,
		"index.html":                           `<li><a href="compat/foreman-stack.html">foreman-stack</a></li>`,
	} {
		page, err := os.ReadFile(filepath.Join(r.site, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), want) {
			t.Errorf("%s lacks %s", file, want)
		}
	}
}

// TestWriteCompatRoot: a site without suites (no suites file, its one
// index at the site root) gets the matrices of its evidence beside its
// catalog, linked from the package list, the set's page and its members'
// pages; a row names no suite and links the version's page instead.
func TestWriteCompatRoot(t *testing.T) {
	r := newRepo(t, all...)
	dir := filepath.Join(r.site, "unstable") // the site root, as a publish without suites.yaml writes it
	for _, ev := range []struct {
		target evidence.Target
		env    string
	}{{stack, "kubernetes=1.33,arch=amd64"}, {foreman, "kubernetes=1.34,arch=arm64"}} {
		e, err := evidence.ParseEnv(ev.env)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := WriteEvidence(dir, ev.target, e, r.envelope(r.x, ev.target, evidence.Pass, ev.env, gen.AddDate(0, 1, 0), r.qa)); err != nil {
			t.Fatal(err)
		}
	}
	pg := &Pages{Site: dir, Signers: []trust.Signer{r.idx}, Root: r.rootFile, Now: gen}
	out, err := pg.WriteCompat(context.Background(), r.rootFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "compat", "foreman.html"), filepath.Join(dir, "compat", "foreman-stack.html")}; strings.Join(out.Matrices, " ") != strings.Join(want, " ") {
		t.Fatalf("WriteCompat wrote %v, want %v", out.Matrices, want)
	}
	for file, want := range map[string][]string{
		"compat/foreman-stack.html": {
			`<a href="../index.html">All packages</a> <span aria-hidden="true">/</span> compatibility`,
			`<dt>Published</dt><dd><a href="../packages/foreman-stack.html#v3.15.0-1">foreman-stack 3.15.0 build 1</a> in the signed index</dd>`,
			`<a href="../evidence/foreman-stack-3.15.0-1/arch=amd64,kubernetes=1.33.intoto.json">pass</a>`,
		},
		"packages/foreman-stack.html": {
			`<a href="../compat/foreman-stack.html">foreman-stack</a>`,
			`<a href="../compat/foreman-stack.html#v3.15.0-1">Test evidence and compatibility of this version</a>`,
		},
		"packages/foreman.html": {`<a href="../compat/foreman.html">foreman</a> · <a href="../compat/foreman-stack.html">release set foreman-stack</a>`},
		"packages/pulp.html":    {`<a href="../compat/foreman-stack.html">release set foreman-stack</a>`},
		"index.html":            {`<li><a href="compat/foreman.html">foreman</a></li><li><a href="compat/foreman-stack.html">foreman-stack</a></li>`},
	} {
		page, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(page), w) {
				t.Errorf("%s lacks %s", file, w)
			}
		}
		if strings.Contains(string(page), "<dt>Suites</dt>") || strings.Contains(string(page), "../../compat/") {
			t.Errorf("%s speaks of suites the site does not have", file)
		}
	}
}

// TestCompareVersions: matrix rows go by semver precedence, not by text.
func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"3.9.0", "3.10.0", -1},
		{"3.10.0", "3.9.0", 1},
		{"1.0.0-rc.1", "1.0.0", -1},
		{"1.0.0-rc.2", "1.0.0-rc.10", -1},
		{"v2.0.0", "2.0.0", 1}, // equal precedence: by text, for a total order
		{"2.0.0", "2.0.0", 0},
		{"1.2.3", "not-semver", -1},
		{"not-semver", "1.2.3", 1},
		{"a", "b", -1},
	} {
		if got := compareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// unwriteCompat removes the compatibility matrices Promote wrote last, so
// that a test writes them as new.
func unwriteCompat(t *testing.T, r *repo) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(r.site, "compat")); err != nil {
		t.Fatal(err)
	}
}
