package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/internal/stacktest"
)

// TestAttestPromote runs the commands as CI does: the Foreman stack's
// records indexed into unstable under a root with a qa role, evidence
// attested with the qa key, foreman promoted into testing and refused
// from stable, and testing verified as a kubepkg subscriber verifies it.
func TestAttestPromote(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	root, idx, qa := keygen(t, keys, "root"), keygen(t, keys, "index"), keygen(t, keys, "qa")
	site := filepath.Join(dir, "site")
	rootFile := filepath.Join(site, "unstable", "root.yaml")
	epochEnv(t, time.Hour)
	if r := runInProcess("trust", "root", "new", "--root-key", root+".pub", "--index-key", idx+".pub", "--qa-key", qa+".pub", "-o", rootFile); r.code != 0 {
		t.Fatal(r)
	}
	if r := runInProcess("trust", "root", "sign", rootFile, "--sign-key", root+".key"); r.code != 0 {
		t.Fatal(r)
	}
	if r := repoIndex(t, stacktest.Dist(), filepath.Join(site, "unstable"), "--sign-key", idx+".key"); r.code != 0 {
		t.Fatal(r)
	}
	suites := filepath.Join(dir, "suites.yaml")
	data, err := os.ReadFile("../../suite/testdata/suites.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(suites, data, 0o644)
	attest := func(key string, extra ...string) result {
		return runInProcess(append([]string{"attest", "foreman@3.15.0", "--build", "1", "--key", key + ".key", "--root", rootFile, "--site", site, "--suites", suites}, extra...)...)
	}
	promote := func(to string) result {
		return runInProcess("promote", "foreman@3.15.0", "--build", "1", "--to", to, "--root", rootFile, "--site", site, "--suites", suites, "--sign-key", idx+".key", "--allow-new")
	}

	r := attest(qa, "--result", "pass", "--env", "kubernetes=1.33.4,arch=amd64,runtime=containerd", "--log", "https://ci.example/runs/1", "--passed", "install,upgrade")
	evFile := filepath.Join(site, "evidence", "foreman-3.15.0-1", "arch=amd64,kubernetes=1.33,runtime=containerd.intoto.json")
	if r.code != 0 || !strings.Contains(r.stdout, evFile+": foreman 3.15.0 build 1 pass on arch=amd64,kubernetes=1.33,runtime=containerd, 3 subjects from "+filepath.Join(site, "unstable", "index.yaml")) {
		t.Fatalf("attest: %s", r)
	}
	// QA in CI attests against the published site into a file for the
	// recipes repository's evidence/.
	srv := httptest.NewServer(http.FileServer(http.Dir(site)))
	defer srv.Close()
	committed := filepath.Join(dir, "repo", "evidence", "foreman.intoto.json")
	r = runInProcess("attest", "foreman@3.15.0", "--build", "1", "--result", "pass", "--env", "kubernetes=1.34,arch=amd64", "--sign-key", qa+".key", "--root", rootFile, "--site", srv.URL, "--suites", suites, "-o", committed)
	if r.code != 0 || !strings.Contains(r.stdout, committed+": foreman 3.15.0 build 1 pass on arch=amd64,kubernetes=1.34, 3 subjects from "+srv.URL+"/unstable/index.yaml") {
		t.Fatalf("attest against a published site: %s", r)
	}
	if r := runInProcess("attest", "foreman@3.15.0", "--build", "1", "--result", "pass", "--env", "kubernetes=1.34,arch=amd64", "--sign-key", qa+".key", "--root", rootFile, "--site", srv.URL, "--suites", suites); r.code != 2 || !strings.Contains(r.stderr, "is a published site: write the evidence to a file with -o") {
		t.Fatalf("attest against a published site without -o: %s", r)
	}
	if r := attest(idx, "--result", "pass", "--env", "kubernetes=1.33,arch=amd64"); r.code != 1 || !strings.Contains(r.stderr, "is not in the qa role of root") {
		t.Fatalf("attest with the index key: %s", r)
	}
	if r := attest(qa, "--result", "ok", "--env", "kubernetes=1.33,arch=amd64"); r.code != 1 || !strings.Contains(r.stderr, `--result "ok": want pass or fail`) {
		t.Fatalf("attest --result ok: %s", r)
	}
	if r := attest(qa, "--result", "pass", "--env", "arch=amd64"); r.code != 2 || !strings.Contains(r.stderr, "the environment needs kubernetes") {
		t.Fatalf("attest without kubernetes: %s", r)
	}
	if r := attest(qa, "--result", "pass", "--env", "kubernetes=1.33,arch=amd64", "--suite", "nightly"); r.code != 1 || !strings.Contains(r.stderr, "error: --suite nightly is not in "+suites) {
		t.Fatalf("attest --suite nightly: %s", r)
	}

	if r := runInProcess("promote", "pulp@3.73.0", "--build", "1", "--to", "testing", "--root", rootFile, "--site", site, "--suites", suites, "--sign-key", idx+".key", "--allow-new"); r.code != 3 ||
		!strings.Contains(r.stderr, "promotion refused: no evidence for pulp 3.73.0 build 1 under "+filepath.Join(site, "evidence", "pulp-3.73.0-1")) || !strings.Contains(r.stderr, "run the tests and 'kbuild attest pulp@3.73.0 --build 1'") {
		t.Fatalf("promote without evidence: %s", r)
	}
	if r := runInProcess("promote", "foreman@3.15.0", "--build", "1", "--to", "testing", "--root", rootFile, "--site", site, "--suites", suites, "--sign-key", idx+".key"); r.code != 3 ||
		!strings.Contains(r.stderr, "testing/index.yaml does not exist: the suite has no index yet; for the first promotion into a suite pass --allow-new, otherwise restore the published site first") {
		t.Fatalf("the first promote into testing without --allow-new: %s", r)
	}
	r = promote("testing")
	if r.code != 0 || !strings.Contains(r.stdout, "evidence: pass on arch=amd64,kubernetes=1.33,runtime=containerd, signed by 1 qa key(s)") ||
		!strings.Contains(r.stdout, "promoted foreman 3.15.0 build 1 from unstable to testing: 1 version(s) copied; signed "+filepath.Join(site, "testing", "index.yaml")+": 1 packages, 1 versions") {
		t.Fatalf("promote: %s", r)
	}
	// Each suite's page of foreman says the build is in unstable and testing.
	for _, s := range []string{"unstable", "testing"} {
		page := readFile(t, filepath.Join(site, s, "packages", "foreman.html"))
		for _, other := range []string{"unstable", "testing"} {
			want := `<span class="badge suite"><a href="../../` + other + `/packages/foreman.html#v3.15.0-1">` + other + `</a></span>`
			if other == s {
				want = `<span class="badge suite">` + s + `</span>`
			}
			if !strings.Contains(page, want) {
				t.Errorf("%s/packages/foreman.html lacks %s", s, want)
			}
		}
	}
	// The matrix of foreman, the one version with evidence: its suites,
	// the environment, the result and the phases its tests name.
	if !strings.Contains(r.stdout, "wrote "+filepath.Join(site, "compat", "foreman.html")) {
		t.Errorf("promote wrote no compatibility matrix: %s", r)
	}
	page := readFile(t, filepath.Join(site, "compat", "foreman.html"))
	mustContain(t, "compat/foreman.html", page, `<h2>3.15.0 <span class="build">build 1</span></h2>`,
		`<a href="../testing/packages/foreman.html#v3.15.0-1">testing</a>`,
		`<td data-label="Kubernetes">1.33</td><td data-label="Arch">amd64</td><td data-label="Other">runtime=containerd</td>`,
		`<span class="badge phase passed">install ✓</span> <span class="badge phase passed">upgrade ✓</span>`)
	if _, err := os.Stat(filepath.Join(site, "compat", "foreman-stack.html")); err == nil {
		t.Error("a matrix of foreman-stack, which has no evidence")
	}
	mustContain(t, "testing/packages/foreman.html", readFile(t, filepath.Join(site, "testing", "packages", "foreman.html")), `<a href="../../compat/foreman.html">foreman</a>`)
	r = promote("stable")
	if r.code != exitRefused || !strings.Contains(r.stderr, "promotion refused: foreman 3.15.0 build 1 does not meet the policy") || !strings.Contains(r.stderr, "no pass on arm64") ||
		!strings.Contains(r.stderr, "the pass on arch=amd64,kubernetes=1.33,runtime=containerd lists no rollback test") {
		t.Fatalf("promote to stable: %s", r)
	}
	if _, err := os.Stat(filepath.Join(site, "stable")); err == nil {
		t.Fatal("a refused promotion wrote the stable suite")
	}
	// testing is a complete kubepkg repository under the same root.
	r = runInProcess("repo", "verify", "--index", filepath.Join(site, "testing", "index.yaml"), "--root-key", root+".pub")
	if r.code != 0 || !strings.Contains(r.stdout, "index.yaml: 1 packages, 1 versions") {
		t.Fatalf("repo verify testing: %s", r)
	}
	// repo verify checks the evidence of what testing holds; a tampered
	// file is refused.
	r = runInProcess("repo", "verify", "--index", filepath.Join(site, "testing", "index.yaml"), "--root-key", root+".pub", "--evidence", filepath.Join(site, "evidence"))
	if r.code != 0 || !strings.Contains(r.stdout, "evidence: 1 verified, 0 refused, 0 for versions this index does not hold") {
		t.Fatalf("repo verify --evidence: %s", r)
	}
	other := filepath.Join(site, "evidence", "pulp-3.73.0-1", "arch=amd64,kubernetes=1.33.intoto.json")
	if r := runInProcess("attest", "pulp@3.73.0", "--build", "1", "--result", "pass", "--env", "kubernetes=1.33,arch=amd64", "--sign-key", qa+".key", "--root", rootFile, "--site", site, "--suites", suites); r.code != 0 {
		t.Fatal(r)
	}
	r = runInProcess("repo", "verify", "--index", filepath.Join(site, "testing", "index.yaml"), "--root-key", root+".pub", "--evidence", filepath.Join(site, "evidence"))
	if r.code != 0 || !strings.Contains(r.stdout, "1 verified, 0 refused, 1 for versions this index does not hold") {
		t.Fatalf("repo verify --evidence with pulp's: %s", r)
	}
	data, _ = os.ReadFile(evFile)
	os.WriteFile(other, []byte(strings.Replace(string(data), `"keyid": "`, `"keyid": "00`, 1)), 0o644)
	r = runInProcess("repo", "verify", "--index", filepath.Join(site, "unstable", "index.yaml"), "--root-key", root+".pub", "--evidence", filepath.Join(site, "evidence"))
	if r.code != exitVerification || !strings.Contains(r.stderr, "refused: "+other+": evidence refused: signed by 0 of the qa role's keys") {
		t.Fatalf("repo verify --evidence with a bad file: %s", r)
	}
	if r := runInProcess("repo", "verify", "--index", filepath.Join(site, "testing", "index.yaml"), "--public-key", idx+".pub", "--evidence", filepath.Join(site, "evidence")); r.code != 2 || !strings.Contains(r.stderr, "--evidence needs --root-key") {
		t.Fatalf("--evidence without a root: %s", r)
	}
	// A withdrawal takes the version out of every suite that holds it.
	r = runInProcess("repo", "withdraw", "foreman@3.15.0", "--build", "1", "--reason", "CVE-2026-0001", "--site", site, "--suites", suites, "--sign-key", idx+".key")
	if r.code != 0 || strings.Count(r.stdout, "withdrew foreman 3.15.0 build 1") != 2 {
		t.Fatalf("withdraw from the suites: %s", r)
	}
	for _, s := range []string{"unstable", "testing"} {
		if got := readFile(t, filepath.Join(site, s, "index.yaml")); !strings.Contains(got, "reason: CVE-2026-0001") {
			t.Errorf("suite %s has no tombstone", s)
		}
	}
	for _, s := range []string{"unstable", "testing"} {
		page := readFile(t, filepath.Join(site, s, "packages", "foreman.html"))
		if !strings.Contains(page, "withdrawn in unstable") || !strings.Contains(page, "withdrawn in testing") || strings.Contains(page, `v3.15.0-1"`) {
			t.Errorf("%s/packages/foreman.html does not show foreman 3.15.0 build 1 withdrawn in both suites and held in none:\n%s", s, page)
		}
	}
	r = runInProcess("repo", "withdraw", "pulp@3.73.0", "--build", "1", "--reason", "bad", "--site", site, "--suites", suites, "--sign-key", idx+".key")
	if r.code != 0 || !strings.Contains(r.stdout, "suite testing does not hold pulp@3.73.0 build 1") || strings.Count(r.stdout, "withdrew pulp") != 1 {
		t.Fatalf("withdraw from the one suite holding it: %s", r)
	}
	if r := promote("testing"); r.code != exitRefused || !strings.Contains(r.stderr, "foreman 3.15.0 build 1 was withdrawn in unstable (CVE-2026-0001)") {
		t.Fatalf("promote a withdrawn version: %s", r)
	}
	if r := runInProcess("promote", "foreman@3.15.0", "--build", "1", "--to", "testing", "--root", rootFile, "--site", site, "--suites", filepath.Join(dir, "none.yaml"), "--sign-key", idx+".key"); r.code != 1 || !strings.Contains(r.stderr, "a repository without suites publishes one index") {
		t.Fatalf("promote without suites.yaml: %s", r)
	}
}
