package suite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/trust"
)

// TestWithdrawOrder: Withdraw changes every suite whose index holds the
// build, in the suites' order, names those that do not, refuses when none
// does, and refuses one named index (Merge) under a suites file before it
// changes anything; each index it changes verifies and has the tombstone.
func TestWithdrawOrder(t *testing.T) {
	r := newRepo(t, all...)
	r.attest(r.x, foreman, evidence.Pass, "kubernetes=1.33,arch=amd64", gen.AddDate(0, 1, 0), r.qa)
	if _, err := r.promote("testing", foreman, gen); err != nil {
		t.Fatal(err)
	}
	withdraw := func(pkg, ver, merge string) (*WithdrawResult, error) {
		a := &Withdraw{Site: r.site, SuitesFile: "testdata/suites.yaml", Package: pkg, Version: ver, Build: 1, Reason: "CVE-2026-0001",
			Signers: []trust.Signer{r.idx}, Generated: gen.Add(time.Hour), Expires: 24 * time.Hour, Merge: merge, Now: gen.Add(time.Hour)}
		return a.Run(context.Background())
	}
	unstable, err := os.ReadFile(filepath.Join(r.site, "unstable", "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := withdraw("pulp", "3.73.0", filepath.Join(r.site, "unstable")); !errors.Is(err, ErrMergeWithSuites) {
		t.Fatalf("Withdraw with Merge under suites = %v, want ErrMergeWithSuites", err)
	}
	if now, _ := os.ReadFile(filepath.Join(r.site, "unstable", "index.yaml")); string(now) != string(unstable) {
		t.Fatal("a refused Withdraw changed unstable/index.yaml")
	}
	bad := &Withdraw{Site: r.site, SuitesFile: "testdata/suites.yaml", Package: "pulp", Version: "3.73.0", Build: 1, Reason: "two\nlines",
		Signers: []trust.Signer{r.idx}, Generated: gen.Add(time.Hour), Expires: 24 * time.Hour}
	var ie *publish.InputError
	if _, err := bad.Run(context.Background()); !errors.As(err, &ie) || ie.Input != "reason" || strings.Contains(err.Error(), "--") {
		t.Fatalf("Withdraw with a two-line reason = %v, want a publish.InputError about the reason, without a flag", err)
	}
	for _, tc := range []struct {
		pkg, ver string
		want     []string // suite: withdrawn or "-" for not held
		err      string
	}{
		{"pulp", "3.73.0", []string{"unstable", "testing-"}, ""},
		{"foreman", "3.15.0", []string{"unstable", "testing"}, ""},
		{"nothing", "1.0.0", nil, "no suite of " + r.site + " holds nothing@1.0.0 build 1 (suites: unstable, testing, stable); nothing to withdraw"},
	} {
		res, err := withdraw(tc.pkg, tc.ver, "")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Withdraw %s = %v, want %q", tc.pkg, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Withdraw %s: %v", tc.pkg, err)
		}
		var got []string
		for _, w := range res.Indexes {
			if w.Withdrawal == nil {
				got = append(got, w.Suite+"-")
				continue
			}
			got = append(got, w.Suite)
			x := r.read(w.Suite).Verified.Index
			if p := x.Packages[tc.pkg]; p != nil {
				for _, v := range p.Versions {
					if v.Version == tc.ver && v.Build == 1 {
						t.Errorf("suite %s still holds %s %s build 1", w.Suite, tc.pkg, tc.ver)
					}
				}
			}
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("Withdraw %s changed %v, want %v", tc.pkg, got, tc.want)
		}
	}
}
