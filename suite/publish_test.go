package suite

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/trust"
)

// TestPublishOrder: Publish reads the suites file, then verifies the new
// evidence, and only then reaches the publisher — evidence that cannot
// count stops it before anything is built or written, and evidence that
// verifies does not. The publisher here has no builder, so reaching it is
// its "no builder" error; the site's index is unchanged in every case.
func TestPublishOrder(t *testing.T) {
	r := newRepo(t, all...)
	env := "kubernetes=1.33,arch=amd64"
	late := gen.AddDate(0, 1, 0)
	suites := filepath.Join(t.TempDir(), "suites.yaml")
	data, err := os.ReadFile("testdata/suites.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(suites, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(r.site, "unstable", "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		evidence []byte
		root     string
		suites   string
		want     string
		is       error
	}{
		{"no root for new evidence", r.envelope(r.x, foreman, evidence.Pass, env, late, r.qa), "", suites,
			"foreman.intoto.json first): evidence counts only when signed by the root's qa role", ErrNeedsRoot},
		{"evidence outside the qa role", r.envelope(r.x, foreman, evidence.Pass, env, late, r.stranger), r.rootFile, suites,
			"foreman.intoto.json: evidence refused: signed by 0 of the qa role's keys", nil},
		{"evidence verified, then the publisher", r.envelope(r.x, foreman, evidence.Pass, env, late, r.qa), r.rootFile, suites,
			"publish: no builder or no target", nil},
		{"no evidence: the publisher first", nil, "", suites, "publish: no builder or no target", nil},
		{"suites file broken: before the evidence", r.envelope(r.x, foreman, evidence.Pass, env, late, r.stranger), r.rootFile, "testdata/../publish.go",
			"publish.go", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.evidence != nil {
				if err := os.WriteFile(filepath.Join(dir, "foreman.intoto.json"), tc.evidence, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var stderr bytes.Buffer
			a := &Publish{Site: r.site, SuitesFile: tc.suites, EvidenceDir: dir, Root: tc.root, Signers: []trust.Signer{r.idx},
				Generated: gen, Now: gen, Stderr: &stderr}
			res, err := a.Run(context.Background(), t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want an error containing %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("Run = %v, want errors.Is %v", err, tc.is)
			}
			if res != nil {
				t.Errorf("Run returned a result %+v with its error; nothing was published", res)
			}
			after, err := os.ReadFile(filepath.Join(r.site, "unstable", "index.yaml"))
			if err != nil || !bytes.Equal(after, before) {
				t.Errorf("unstable/index.yaml changed (%v): a publish that fails writes nothing", err)
			}
			if _, err := os.Stat(filepath.Join(r.site, "evidence")); err == nil {
				t.Errorf("%s/evidence exists: evidence is copied only after the index is published", r.site)
			}
		})
	}
}
