package publish

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/examples"
	"kbuild.dev/kbuild/sitelayout"
)

// exampleFixture is a layout fixture whose recipes are the bundled
// examples, as kbuild publish with no arguments builds them.
func exampleFixture(t *testing.T) *fixture {
	t.Helper()
	f := newLayoutFixture(t)
	if err := os.CopyFS(filepath.Join(f.work, "recipes"), examples.FS); err != nil {
		t.Fatal(err)
	}
	return f
}

// checkWrote fails unless res is the index of site with the three
// examples, one version each.
func (f *fixture) checkWrote(res *Result, site string) {
	f.t.Helper()
	if want := filepath.Join(f.work, site, sitelayout.IndexFile); res.Index != want || res.Packages != 3 || res.Versions != 3 {
		f.t.Errorf("wrote %s: %d packages, %d versions; want %s: 3 packages, 3 versions", res.Index, res.Packages, res.Versions, want)
	}
}

// TestPublishExamplesNothingNewNoDist is every push to main that changes
// no recipe, on a fresh checkout: no dist/, everything published. Publish
// re-signs the published versions, and the result verifies.
func TestPublishExamplesNothingNewNoDist(t *testing.T) {
	f := exampleFixture(t)
	if _, err := f.publish("_site", nil); err != nil {
		t.Fatalf("publish: %v\n%s%s", err, f.stdout.String(), f.stderr.String())
	}
	os.RemoveAll(filepath.Join(f.work, "dist"))
	res, err := f.publish("_site", nil)
	if err != nil {
		t.Fatalf("publish with nothing new and no dist/: %v\n%s%s", err, f.stdout.String(), f.stderr.String())
	}
	if n := strings.Count(f.stdout.String(), ": up to date ("); n != 3 {
		t.Errorf("%d recipes up to date, want 3:\n%s", n, f.stdout.String())
	}
	f.checkWrote(res, "_site")
	f.verified("_site")
}

// TestPublishExamplesIgnoresStaleRecords: a record left in dist/ that this
// run did not build and the published index does not have (here one
// pointing at a chart never pushed) is not signed; publish says so.
func TestPublishExamplesIgnoresStaleRecords(t *testing.T) {
	f := exampleFixture(t)
	stale := writeRecord(t, filepath.Join(f.work, "dist"), testRecord("ghost", "9.9.9", "oci://127.0.0.1:8080/ghost"))
	res, err := f.publish("_site", nil)
	if err != nil {
		t.Fatalf("publish with a stale record in dist/: %v\n%s%s", err, f.stdout.String(), f.stderr.String())
	}
	f.checkWrote(res, "_site")
	if want := "warning: " + stale + ": not built by this publish and not in the published index; ignored, not signed"; !strings.Contains(f.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, f.stderr.String())
	}
	if idx, _ := os.ReadFile(filepath.Join(f.work, "_site", sitelayout.IndexFile)); len(idx) == 0 || strings.Contains(string(idx), "ghost") {
		t.Errorf("the stale record %s was signed, or no index was written", stale)
	}
}
