package suite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/internal/stacktest"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// TestMirrorRoot: with rootSuite, the site root serves the first suite's
// index byte for byte, and a subscriber pinning version 1 of the root
// verifies it by the same path as the suite's; a copy that would roll the
// root back, or a suite whose signature is not its index's, is refused
// with nothing written.
func TestMirrorRoot(t *testing.T) {
	r := newRepo(t, all...)
	data, err := Parse([]byte("apiVersion: kbuild.dev/v1\nkind: Suites\nrootSuite: unstable\nsuites:\n  - name: unstable\n  - name: testing\n    policy: {kubernetesMinors: 1, architectures: [amd64], role: qa}\n"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := data.MirrorRoot(r.site, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Files, " "); !strings.HasPrefix(got, "root/1.yaml root.yaml ") || !strings.HasSuffix(got, " index.yaml.sig index.yaml") {
		t.Errorf("copied %s; want the root chain first and the index last", got)
	}
	for _, f := range []string{"index.yaml", "index.yaml.sig", "root.yaml", "root/1.yaml"} {
		a, _ := os.ReadFile(filepath.Join(r.site, "unstable", f))
		b, err := os.ReadFile(filepath.Join(r.site, f))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("the site root's %s is not the unstable suite's (%v)", f, err)
		}
	}
	page, err := os.ReadFile(filepath.Join(r.site, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<a class="pkg-name" href="unstable/index.html">unstable</a> <span class="badge latest">also index.yaml here</span>`,
		// testing has no index before its first promotion: named, not linked.
		`<span class="pkg-name">testing</span> <span class="badge">no index yet</span></td><td class="muted">nothing promoted into it yet</td><td>from unstable, when the evidence shows a pass on &gt;= 1 Kubernetes minor versions and on amd64, signed by qa</td>`,
		`<a href="index.yaml.sig">index.yaml.sig</a>`, `<a href="root.yaml">root.yaml</a>`,
	} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the site root's index.html lacks %s", want)
		}
	}
	if bytes.Contains(page, []byte(`href="testing/`)) {
		t.Errorf("the site root's index.html links suite testing, which has no index yet")
	}
	top := r.read(".")
	if _, v := top.Verified.Index.Counts(); v != len(all) {
		t.Errorf("the site root's index holds %d versions, want %d", v, len(all))
	}

	// An older index of the same repository would roll subscribers back.
	old := filepath.Join(t.TempDir(), "old")
	os.MkdirAll(filepath.Join(old, "root"), 0o755)
	for _, f := range []string{"root.yaml", "root/1.yaml"} {
		b, _ := os.ReadFile(filepath.Join(r.site, "unstable", f))
		os.WriteFile(filepath.Join(old, f), b, 0o644)
	}
	p, err := publish.New(publish.WithSigners(r.idx), publish.WithGenerated(gen.Add(-3*time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Index(context.Background(), stacktest.CopyDist(t, all...), filepath.Join(old, "index.yaml")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(r.site, "index.yaml"))
	if _, err := publish.MirrorIndex(old, r.site); err == nil || !strings.Contains(err.Error(), "subscribers of "+filepath.Join(r.site, "index.yaml")+" would refuse the copy as a rollback; nothing was copied") {
		t.Errorf("MirrorIndex of an older index = %v", err)
	}
	// A signature that is not the index's (a publish half-way).
	os.WriteFile(filepath.Join(old, "index.yaml.sig"), []byte("signatures: []\n"), 0o644)
	if _, err := publish.MirrorIndex(old, r.site); err == nil || !strings.Contains(err.Error(), "index.yaml.sig is not the signature of index.yaml") {
		t.Errorf("MirrorIndex with a foreign signature = %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(r.site, "index.yaml")); !bytes.Equal(before, after) {
		t.Error("a refused copy changed the site root's index")
	}
	// The copy verifies with the keys alone too, as a publicKeys subscriber.
	if _, err := siteread.ReadIndexAt(context.Background(), r.site, &trust.Trust{IndexKeys: []*trust.PublicKey{r.idx.Public()}}, gen); err != nil {
		t.Error(err)
	}
}
