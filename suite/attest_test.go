package suite

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/trust"
)

// TestAttestOrder: Attest checks the signers against the root's qa role
// and reads the verified index before it signs, and writes nothing when
// either refuses or when the site is a URL without a file to write to;
// evidence it writes is at its place in the site and verifies against the
// index.
func TestAttestOrder(t *testing.T) {
	r := newRepo(t, all...)
	env := map[string]string{"kubernetes": "1.33", "arch": "amd64"}
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(r.site, "unstable"))))
	defer srv.Close()
	for _, tc := range []struct {
		name    string
		signers []trust.Signer
		site    string
		suite   string
		want    string
		is      error
	}{
		{"outside the qa role", []trust.Signer{r.stranger}, r.site, "", "is not in the qa role of root", nil},
		{"suite not in the suites file", []trust.Signer{r.qa}, r.site, "nightly", "nightly", nil},
		{"a site URL and no file", []trust.Signer{r.qa}, srv.URL, "", "is a published site", ErrSiteURL},
		{"into the site", []trust.Signer{r.qa}, r.site, "", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			a := &Attest{Target: foreman, Result: evidence.Pass, Env: env, Passed: []string{"install"}, Signers: tc.signers, Root: r.rootFile,
				Site: tc.site, Suite: tc.suite, SuitesFile: "testdata/suites.yaml", Issued: gen, Expires: 24 * time.Hour, Now: gen, Stderr: &stderr}
			if tc.is != nil {
				a.SuitesFile = filepath.Join(t.TempDir(), "none.yaml")
			}
			res, err := a.Run(context.Background())
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
					t.Fatalf("Run = %v, want an error containing %q", err, tc.want)
				}
				if _, err := os.Stat(filepath.Join(r.site, "evidence")); err == nil {
					t.Fatalf("%s/evidence exists after a refused attest", r.site)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(res.File)
			if err != nil {
				t.Fatal(err)
			}
			v, err := evidence.Verify(data, r.root, r.x, gen)
			if err != nil || v.Target != foreman {
				t.Fatalf("the evidence written to %s: Verify = %v, %v; want evidence of %s", res.File, v, err, foreman)
			}
			if !strings.HasPrefix(res.File, filepath.Join(r.site, "evidence")+string(filepath.Separator)) {
				t.Errorf("evidence written to %s, want under %s/evidence", res.File, r.site)
			}
		})
	}
}
