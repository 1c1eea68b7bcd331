package publish

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/kubepkgclient"
	"kbuild.dev/kbuild/sitelayout"
)

// snapshot copies the site's index.yaml, index.yaml.sig and by-hash/ as
// they are at this instant, as a kill here would leave them.
func snapshot(t *testing.T, site, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(site)); err != nil {
		t.Fatal(err)
	}
}

// TestIndexPairAtEveryStep stops a publish over a published index at
// each step of putting the new index in place (fault injection through
// pauseAt): at every step index.yaml and index.yaml.sig, read as kubepkg
// reads them (kubepkgclient), verify — and a copy of the site as a kill
// at that step leaves it is repaired by the next publish's start
// (repairPair) to index.yaml.sig holding exactly the signature by digest.
func TestIndexPairAtEveryStep(t *testing.T) {
	f := newLayoutFixture(t)
	f.recipe("alpha", "1.0.0", 1)
	if _, err := f.publish("site", nil); err != nil {
		t.Fatal(err)
	}
	f.recipe("beta", "2.0.0", 1)
	site := filepath.Join(f.work, "site")
	keys := []string{string(f.key.Public().PEM())}
	var steps []string
	kills := map[string]string{}
	check := func(step string) {
		steps = append(steps, step)
		data, err := os.ReadFile(filepath.Join(site, sitelayout.IndexFile))
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		sig, err := os.ReadFile(filepath.Join(site, sitelayout.SignatureFile))
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if err := kubepkgclient.VerifyWithKeys(data, sig, keys); err != nil {
			t.Errorf("at %s a kubepkg subscriber refuses the site: %v", step, err)
		}
		kills[step] = filepath.Join(f.work, "killed-at-"+strings.ReplaceAll(step, " ", "-"))
		snapshot(t, site, kills[step])
	}
	pauseAt = check
	defer func() { pauseAt = func(string) {} }()
	if _, err := f.publish("site", nil); err != nil {
		t.Fatal(err)
	}
	pauseAt = func(string) {}
	check("done")
	for _, want := range []string{"by-hash", "both signatures", "index"} {
		if !slices.Contains(steps, want) {
			t.Errorf("the publish never reached step %q (steps: %v)", want, steps)
		}
	}
	for step, dir := range kills {
		if _, err := repairPair(dir); err != nil {
			t.Fatalf("repairPair after a kill at %s: %v", step, err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, sitelayout.IndexFile))
		sig, _ := os.ReadFile(filepath.Join(dir, sitelayout.SignatureFile))
		byHash, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(sitelayout.ByHashSignatureFile(data))))
		if err != nil || !bytes.Equal(sig, byHash) {
			t.Errorf("after a kill at %s and repairPair, index.yaml.sig is not the signature by digest of index.yaml (%v)", step, err)
		}
		if err := kubepkgclient.VerifyWithKeys(data, sig, keys); err != nil {
			t.Errorf("after a kill at %s and repairPair, kubepkg refuses the site: %v", step, err)
		}
	}
}

// TestRepairPair: the new signature beside the old index, as a publish
// killed between the two renames of earlier kbuilds left it, is put back
// to the old index's signature by the next publish, which then goes on.
func TestRepairPair(t *testing.T) {
	f := newLayoutFixture(t)
	f.recipe("alpha", "1.0.0", 1)
	if _, err := f.publish("site", nil); err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(f.work, "site")
	old, _ := os.ReadFile(filepath.Join(site, sitelayout.IndexFile))
	f.recipe("beta", "2.0.0", 1)
	if _, err := f.publish("site", nil); err != nil {
		t.Fatal(err)
	}
	newSig, _ := os.ReadFile(filepath.Join(site, sitelayout.SignatureFile))
	// The torn state: the old index, the new signature.
	if err := os.WriteFile(filepath.Join(site, sitelayout.IndexFile), old, 0o644); err != nil {
		t.Fatal(err)
	}
	keys := []string{string(f.key.Public().PEM())}
	if kubepkgclient.VerifyWithKeys(old, newSig, keys) == nil {
		t.Fatal("the torn pair verifies: the test does not test anything")
	}
	f.recipe("gamma", "3.0.0", 1)
	if _, err := f.publish("site", nil); err != nil {
		t.Fatalf("publish over a torn pair: %v", err)
	}
	if !strings.Contains(f.stderr.String(), "restored it from by-hash/sha256/") {
		t.Errorf("the publish did not say it repaired the pair:\n%s", f.stderr.String())
	}
	data, _ := os.ReadFile(filepath.Join(site, sitelayout.IndexFile))
	sig, _ := os.ReadFile(filepath.Join(site, sitelayout.SignatureFile))
	if err := kubepkgclient.VerifyWithKeys(data, sig, keys); err != nil {
		t.Errorf("after the publish kubepkg refuses the site: %v", err)
	}
}

// TestRemoveTemps: the temporary files a killed publish left anywhere in
// the site (provenance/ included) are removed at the start of the next;
// those of a suite below, a site of its own, are not.
func TestRemoveTemps(t *testing.T) {
	site := t.TempDir()
	files := map[string]bool{ // path: removed
		".index.yaml.tmp-123":                         true,
		"by-hash/sha256/.abc.sig.tmp-9":               true,
		"provenance/.p3-1.0.0-1.intoto.json.tmp-4567": true,
		"sbom/.x-1.0.0-1.cdx.json.tmp-1":              true,
		"packages/.p3.html.tmp-2":                     true,
		"provenance/p3-1.0.0-1.intoto.json":           false,
		".kbuild.lock":                                false,
		"stable/index.yaml":                           false,
		"stable/.index.yaml.tmp-77":                   false,
	}
	for name := range files {
		p := filepath.Join(site, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := removeTemps(site)
	for name, removed := range files {
		_, err := os.Stat(filepath.Join(site, filepath.FromSlash(name)))
		if removed != (err != nil) {
			t.Errorf("%s: removed = %v, want %v", name, err != nil, removed)
		}
		if removed != slices.Contains(got, name) {
			t.Errorf("removeTemps reports %v, which should list %s = %v", got, name, removed)
		}
	}
}
