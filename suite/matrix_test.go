package suite

import (
	"context"
	"os"
	"strings"
	"testing"

	"kbuild.dev/kbuild/evidence"
)

// TestMatrix: rows are the set versions the suites hold, columns the
// environments tested, cells pass, fail or untested linking to the
// evidence, and "supported" only where a suite's policy is met.
func TestMatrix(t *testing.T) {
	r := newRepo(t, append(all, "pulp-3.73.0-2", "foreman-stack-3.15.0-2")...)
	r.attest(r.x, stack, evidence.Pass, "kubernetes=1.33,arch=amd64", gen.AddDate(0, 1, 0), r.qa)
	r.attest(r.x, stack, evidence.Fail, "kubernetes=1.34,arch=arm64", gen.AddDate(0, 1, 0), r.qa)
	r.attest(r.x, stack, evidence.Pass, "kubernetes=1.32,arch=amd64", gen.AddDate(0, 1, 0), r.idx) // not qa: not shown
	if _, err := r.promote("testing", stack, gen); err != nil {
		t.Fatal(err)
	}
	ms, err := Matrices(context.Background(), r.site, r.cfg, r.rootFile, gen)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Set != "foreman-stack" || strings.Join(ms[0].Envs, " ") != "arch=amd64,kubernetes=1.33 arch=arm64,kubernetes=1.34" {
		t.Fatalf("matrices = %+v", ms)
	}
	rows := ms[0].Rows
	// Build 3 pins a candlepin that is not published: not a whole set.
	if len(rows) != 2 || rows[0].Build != 2 || rows[1].Build != 1 {
		t.Fatalf("rows = %+v", rows)
	}
	b1, b2 := rows[1], rows[0]
	if strings.Join(b1.Suites, ",") != "unstable,testing" || strings.Join(b1.Supported, ",") != "testing" || b1.Cells[0].Result != evidence.Pass || b1.Cells[1].Result != evidence.Fail ||
		b1.Cells[0].File != "evidence/foreman-stack-3.15.0-1/arch=amd64,kubernetes=1.33.intoto.json" {
		t.Fatalf("build 1 = %+v", b1)
	}
	if strings.Join(b2.Suites, ",") != "unstable" || len(b2.Supported) != 0 || b2.Cells[0].Result != Untested || b2.Cells[1].Result != Untested {
		t.Fatalf("build 2 = %+v", b2)
	}
	files, err := WriteMatrices(r.site, ms)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<span class="badge">supported in testing</span>`,
		`<td class="pass"><a href="../evidence/foreman-stack-3.15.0-1/arch=amd64,kubernetes=1.33.intoto.json">pass</a></td>`,
		`<td class="fail"><a href="../evidence/foreman-stack-3.15.0-1/arch=arm64,kubernetes=1.34.intoto.json">fail</a></td>`,
		`<td class="untested">untested</td>`,
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("matrix page lacks %s:\n%s", want, page)
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
