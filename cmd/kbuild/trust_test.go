package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"kbuild.dev/kbuild/internal/chartpin"
	"kbuild.dev/kbuild/trust"
)

func TestTrustRootChain(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	root1, root2, root3 := keygen(t, keys, "root1"), keygen(t, keys, "root2"), keygen(t, keys, "root3")
	idx, virt := keygen(t, keys, "index"), keygen(t, keys, "virt")
	site := filepath.Join(dir, "site")
	rootFile := filepath.Join(site, "root.yaml")
	epochEnv(t, 3*time.Hour)

	r := runInProcess("trust", "root", "new", "--key", root1+".pub", "--key", root2+".key", "--threshold", "2", "--index-key", idx+".pub",
		"--delegate", "team-virt=kubevirt*,cdi-operator", "--delegate-key", "team-virt="+virt+".pub", "-o", rootFile)
	if r.code != 0 || !strings.Contains(r.stdout, "version 1, 2 root keys (threshold 2), 1 index keys (threshold 1), 1 delegations") {
		t.Fatalf("root new: %s", r)
	}
	if _, err := os.Stat(filepath.Join(site, "root", "1.yaml")); err != nil {
		t.Fatal("root new did not write root/1.yaml")
	}
	if r := runInProcess("trust", "root", "new", "--root-key", root1+".pub", "--index-key", idx+".pub", "-o", rootFile); r.code != 1 || !strings.Contains(r.stderr, "refusing to overwrite") {
		t.Fatalf("root new over an existing root: %s", r)
	}
	for i, k := range []string{root1, root2} {
		r := runInProcess("trust", "root", "sign", rootFile, "--key", k+".key")
		if want := fmt.Sprintf("root version 1 now has %d signatures\n", i+1); r.code != 0 || r.stdout != want {
			t.Fatalf("root sign: %s, want %q", r, want)
		}
	}
	if a, b := readFile(t, rootFile), readFile(t, filepath.Join(site, "root", "1.yaml")); a != b {
		t.Fatal("root sign did not keep root/1.yaml equal to root.yaml")
	}

	distDir := filepath.Join(dir, "dist")
	os.MkdirAll(distDir, 0o755)
	chart := hexDigest([]byte("chart"))
	signedRec := writeRecord(t, distDir, "kubevirt", "1.9.0", 4, "oci://r/kubevirt", chart)
	writeRecord(t, distDir, "kubevirt", "1.10.0", 1, "oci://r/kubevirt", chart) // delegated, unsigned
	writeRecord(t, distDir, "cdi", "1.66.1", 1, "oci://r/cdi", chart)           // not delegated
	r = runInProcess("trust", "sign", signedRec, "--key", virt+".key")
	if r.code != 0 || !strings.Contains(r.stdout, "signed kubevirt 1.9.0 build 4") || !strings.Contains(r.stdout, "kubevirt-1.9.0-4.sig.yaml has 1 signature(s)") {
		t.Fatalf("trust sign: %s", r)
	}
	epochEnv(t, 2*time.Hour)
	if r := repoIndex(t, distDir, site, "--sign-key", idx+".key", "--index", site, "--index-root", rootFile, "--allow-new"); r.code != 0 {
		t.Fatalf("publish under the root: %s", r)
	}
	if r := repoIndex(t, distDir, filepath.Join(dir, "other"), "--sign-key", virt+".key", "--index", site, "--index-root", rootFile); r.code != 1 || !strings.Contains(r.stderr, "index role") {
		t.Fatalf("publish with a key outside the index role: %s", r)
	}

	srv := httptest.NewServer(http.FileServer(http.Dir(site)))
	defer srv.Close()
	state := filepath.Join(dir, "state.json")
	verify := func() result {
		return runInProcess("repo", "verify", "--index", srv.URL+"/index.yaml", "--root-key", root1+".pub", "--root-key", root2+".pub", "--root-threshold", "2", "--state", state)
	}
	r = verify()
	if r.code != 0 || !strings.Contains(r.stdout, "index.yaml: 2 packages, 2 versions, signed by 1 of 1, expires in 29 days\nroot.yaml: version 1, expires in 364 days") {
		t.Fatalf("verify under the root: %s", r)
	}
	mustContain(t, "warnings", r.stderr, "warning: kubevirt 1.10.0 build 1 dropped: delegation team-virt needs 1 signature(s)")

	// Rotate root1 out: version 2 signed by the new keys alone is refused.
	epochEnv(t, time.Hour)
	r = runInProcess("trust", "root", "next", rootFile, "--root-key", root2+".pub", "--root-key", root3+".pub", "-o", rootFile)
	if r.code != 0 || !strings.Contains(r.stdout, "version 2, 2 root keys (threshold 2)") {
		t.Fatalf("root next: %s", r)
	}
	for _, k := range []string{root2, root3} {
		if r := runInProcess("trust", "root", "sign", rootFile, "--sign-key", k+".key"); r.code != 0 {
			t.Fatal(r)
		}
	}
	r = verify()
	if r.code != exitVerification || !strings.Contains(r.stderr, "refused: root/2.yaml: root version 2 is not signed by the root keys of version 1: 1 valid signature(s)") {
		t.Fatalf("v2 signed by the new keys only: %s", r)
	}
	if r := runInProcess("trust", "root", "sign", rootFile, "--sign-key", root1+".key"); r.code != 0 || !strings.Contains(r.stdout+r.stderr, "is not a root key of version 2") {
		t.Fatalf("old key signs: %s", r)
	}
	r = verify()
	if r.code != 0 || !strings.Contains(r.stdout, "root.yaml: version 2") {
		t.Fatalf("v2 signed by old and new keys: %s", r)
	}
	st, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.ParseState(st)
	if err != nil || s.RootVersion != 2 {
		t.Fatalf("state %s: %v", st, err)
	}
	// A root 2 that differs from the one accepted: a fork.
	s.RootDigest = hexDigest([]byte("another root 2"))
	b, _ := s.Marshal()
	os.WriteFile(state, b, 0o644)
	if r := verify(); r.code != exitVerification || !strings.Contains(r.stderr, "the root chain forked") {
		t.Fatalf("fork: %s", r)
	}
}

// pushChart pushes archive as a Helm chart to ref and returns its digest.
func pushChart(t *testing.T, ref string, archive []byte) string {
	t.Helper()
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: static.NewLayer(archive, types.MediaType(chartpin.ChartLayerMediaType))})
	if err != nil {
		t.Fatal(err)
	}
	img = mutate.MediaType(mutate.ConfigMediaType(img, "application/vnd.cncf.helm.config.v1+json"), types.OCIManifestSchema1)
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	return hexDigest(archive)
}

func TestRepoVerifyCharts(t *testing.T) {
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	dir := t.TempDir()
	key := keygen(t, dir, "index")
	archive := []byte("chart archive v1")
	digest := pushChart(t, host+"/kubevirt/operator:1.9.0-4", archive)
	distDir := filepath.Join(dir, "dist")
	os.MkdirAll(distDir, 0o755)
	writeRecord(t, distDir, "kubevirt", "1.9.0", 4, "oci://"+host+"/kubevirt", digest)
	epochEnv(t, time.Hour)
	site := filepath.Join(dir, "site")
	if r := repoIndex(t, distDir, site, "--sign-key", key+".key"); r.code != 0 {
		t.Fatal(r)
	}
	r := runInProcess("repo", "verify", "--index", site, "--public-key", key+".pub", "--charts", "--plain-http")
	if r.code != 0 || !strings.Contains(r.stderr, "1 charts match their pinned digests") {
		t.Fatalf("verify --charts: %s", r)
	}
	other := pushChart(t, host+"/kubevirt/operator:1.9.0-4", []byte("chart archive pushed again"))
	r = runInProcess("repo", "verify", "--index", site, "--public-key", key+".pub", "--charts", "--plain-http")
	want := fmt.Sprintf("refused: kubevirt 1.9.0 build 4 variant default component operator: chart %s/kubevirt/operator:1.9.0-4 archive is %s, but the index pins %s", host, other, digest)
	if r.code != exitVerification || !strings.Contains(r.stderr, want) {
		t.Fatalf("verify --charts after a re-push: %s\nwant %q", r, want)
	}
}

func TestTrustRootQARole(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	root, idx, qa1, qa2 := keygen(t, keys, "root"), keygen(t, keys, "index"), keygen(t, keys, "qa1"), keygen(t, keys, "qa2")
	rootFile := filepath.Join(dir, "site", "root.yaml")
	epochEnv(t, time.Hour)
	r := runInProcess("trust", "root", "new", "--root-key", root+".pub", "--index-key", idx+".pub", "--qa-key", qa1+".pub", "--qa-key", qa2+".pub", "--qa-threshold", "2", "-o", rootFile)
	if r.code != 0 || !strings.Contains(r.stdout, "qa role: 2 keys (threshold 2) sign test evidence") {
		t.Fatalf("root new with a qa role: %s", r)
	}
	r = runInProcess("trust", "root", "next", rootFile, "--qa-threshold", "1", "-o", rootFile)
	if r.code != 0 || !strings.Contains(r.stdout, "qa role: 2 keys (threshold 1)") {
		t.Fatalf("root next keeping the qa keys: %s", r)
	}
	r = runInProcess("trust", "root", "next", rootFile, "--qa-threshold", "3", "-o", rootFile)
	if r.code != 1 || !strings.Contains(r.stderr, "qa role threshold is 3 with 2 keys") {
		t.Fatalf("qa threshold above the keys: %s", r)
	}
	other := filepath.Join(dir, "plain", "root.yaml")
	r = runInProcess("trust", "root", "new", "--root-key", root+".pub", "--index-key", idx+".pub", "-o", other)
	if r.code != 0 || strings.Contains(r.stdout, "qa role") {
		t.Fatalf("root new without a qa role: %s", r)
	}
}

// TestTrustSignSeveralKeys: trust sign and trust root sign take every
// --sign-key and the --sign-key-env key, and sign with all of them in one
// write; without a key they are usage errors.
func TestTrustSignSeveralKeys(t *testing.T) {
	dir := t.TempDir()
	a, b := keygen(t, dir, "a"), keygen(t, dir, "b")
	t.Setenv("KBUILD_TEST_SIGN_KEY", readFile(t, b+".key"))
	rec := writeRecord(t, dir, "kubevirt", "1.9.0", 4, "oci://r/kubevirt", hexDigest([]byte("chart")))
	r := runInProcess("trust", "sign", rec, "--sign-key", a+".key", "--sign-key-env", "KBUILD_TEST_SIGN_KEY")
	if r.code != 0 || !strings.Contains(r.stdout, "kubevirt-1.9.0-4.sig.yaml has 2 signature(s)") || !strings.Contains(r.stdout, ", ") {
		t.Fatalf("trust sign with two keys: %s", r)
	}
	if r := runInProcess("trust", "sign", rec); r.code != 2 || !strings.Contains(r.stderr, "--sign-key FILE") {
		t.Errorf("trust sign without a key: %s, want a usage error", r)
	}
	rootFile := filepath.Join(dir, "site", "root.yaml")
	if r := runInProcess("trust", "root", "new", "--root-key", a+".pub", "--root-key", b+".pub", "--root-threshold", "2", "--index-key", a+".pub", "-o", rootFile); r.code != 0 {
		t.Fatalf("root new: %s", r)
	}
	if r := runInProcess("trust", "root", "sign", rootFile, "--sign-key", a+".key", "--sign-key", b+".key"); r.code != 0 || r.stdout != "root version 1 now has 2 signatures\n" {
		t.Fatalf("root sign with two keys: %s", r)
	}
	if r := runInProcess("trust", "root", "sign", rootFile); r.code != 2 {
		t.Errorf("root sign without a key: %s, want a usage error", r)
	}
}
