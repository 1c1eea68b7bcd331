package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/kubepkgclient"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// epochEnv sets SOURCE_DATE_EPOCH to ago before now and returns that time.
func epochEnv(t *testing.T, ago time.Duration) time.Time {
	t.Helper()
	e := time.Now().Add(-ago).UTC().Truncate(time.Second)
	t.Setenv("SOURCE_DATE_EPOCH", strconv.FormatInt(e.Unix(), 10))
	return e
}

func hexDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// writeRecord writes the build record of name version build to dist, its
// chart pinned to chartDigest in repository.
func writeRecord(t *testing.T, distDir, name, version string, build int, repository, chartDigest string) string {
	t.Helper()
	rec := spec.PackageSource{
		APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind,
		Metadata: spec.RecordMetadata{Name: name, Annotations: map[string]string{index.DescriptionAnnotation: "The " + name + " package"}},
		Spec: spec.PackageSpec{
			Version: version, Build: build,
			Variants: []spec.Variant{{Name: "default",
				Requires:   []spec.Requirement{{Package: "cdi", Version: ">=1.2 <2"}},
				Components: []spec.Component{{Name: "operator", Chart: &spec.ChartRef{Repository: repository, Name: "operator", Version: fmt.Sprintf("%s-%d", version, build), Digest: chartDigest}}},
			}},
		},
	}
	b, err := dist.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(distDir, fmt.Sprintf("%s-%s-%d.yaml", name, version, build))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// keygen makes PREFIX.key and PREFIX.pub in dir and returns PREFIX.
func keygen(t testing.TB, dir, name string) string {
	t.Helper()
	prefix := filepath.Join(dir, name)
	if r := runInProcess("repo", "keygen", prefix); r.code != 0 {
		t.Fatalf("keygen: %s", r)
	}
	return prefix
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

func TestRepoKeygen(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "keys", "index")
	r := runInProcess("repo", "keygen", prefix)
	if r.code != 0 {
		t.Fatal(r)
	}
	fi, err := os.Stat(prefix + ".key")
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("PREFIX.key: %v %v, want mode 0600", err, fi)
	}
	pub, _ := os.ReadFile(prefix + ".pub")
	k, err := trust.ParsePublicKey(pub)
	if err != nil || strings.TrimSpace(r.stdout) != k.KeyID() {
		t.Fatalf("keygen printed %q, the key is %v (%v)", r.stdout, k, err)
	}
	priv, _ := os.ReadFile(prefix + ".key")
	if strings.Contains(r.stdout+r.stderr, string(priv[30:60])) {
		t.Fatal("keygen printed the private key")
	}
	r = runInProcess("repo", "keygen", prefix)
	if r.code != 1 || !strings.Contains(r.stderr, "refusing to overwrite") {
		t.Fatalf("second keygen: %s", r)
	}
	if after, _ := os.ReadFile(prefix + ".key"); string(after) != string(priv) {
		t.Fatal("the key was overwritten")
	}
}

// site publishes dist with key into a new site directory and returns it.
func repoIndex(t *testing.T, distDir, out string, extra ...string) result {
	t.Helper()
	return runInProcess(append([]string{"repo", "index", distDir, "-o", filepath.Join(out, "index.yaml")}, extra...)...)
}

func TestRepoIndexAndVerify(t *testing.T) {
	dir := t.TempDir()
	key := keygen(t, dir, "index")
	key2 := keygen(t, dir, "index2")
	distDir := filepath.Join(dir, "dist")
	os.MkdirAll(filepath.Join(distDir, "oci"), 0o755)
	chart := hexDigest([]byte("chart"))
	writeRecord(t, distDir, "kubevirt", "1.9.0", 4, "oci://127.0.0.1:5000/kubevirt", chart)
	writeRecord(t, distDir, "kubevirt", "1.10.0", 1, "oci://127.0.0.1:5000/kubevirt", chart)
	writeRecord(t, distDir, "cdi", "1.66.1", 1, "oci://127.0.0.1:5000/cdi", chart)
	os.WriteFile(filepath.Join(distDir, "kubevirt-1.9.0-4.build.yaml"), []byte("apiVersion: kbuild.dev/v1\nkind: BuildInfo\npackage: kubevirt\nversion: 1.9.0\nbuild: 4\n"), 0o644)
	os.WriteFile(filepath.Join(distDir, "oci", "index.yaml"), []byte("not: a record\n"), 0o644)
	os.WriteFile(filepath.Join(distDir, "notes.yaml"), []byte("kind: Something\n"), 0o644)
	epoch := epochEnv(t, time.Hour)

	site := filepath.Join(dir, "site")
	r := repoIndex(t, distDir, site, "--sign-key", key+".key")
	if r.code != 0 {
		t.Fatal(r)
	}
	pub, _ := os.ReadFile(key + ".pub")
	k, _ := trust.ParsePublicKey(pub)
	want := fmt.Sprintf("wrote %s: 2 packages, 3 versions\nsigned %s.sig (keyid %s)\n", filepath.Join(site, "index.yaml"), filepath.Join(site, "index.yaml"), k.KeyID())
	if r.stdout != want {
		t.Fatalf("repo index printed\n%s\nwant\n%s", r.stdout, want)
	}
	data, _ := os.ReadFile(filepath.Join(site, "index.yaml"))
	x, err := index.ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	if !x.Generated.Equal(epoch) || !x.Expires.Equal(epoch.Add(30*24*time.Hour)) {
		t.Errorf("generated %s expires %s, want SOURCE_DATE_EPOCH %s + 30 days", x.Generated, x.Expires, epoch)
	}
	mustContain(t, "index.yaml", string(data), "version: '>=1.2 <2'", "    - build: 1\n")
	// Same inputs, same bytes.
	r = repoIndex(t, distDir, filepath.Join(dir, "site2"), "--sign-key", key+".key")
	again, _ := os.ReadFile(filepath.Join(dir, "site2", "index.yaml"))
	if r.code != 0 || string(again) != string(data) {
		t.Fatalf("a second run differs: %s", r)
	}

	srv := httptest.NewServer(http.FileServer(http.Dir(site)))
	defer srv.Close()
	for _, ref := range []string{filepath.Join(site, "index.yaml"), site, srv.URL + "/index.yaml", srv.URL} {
		r := runInProcess("repo", "verify", "--index", ref, "--public-key", key+".pub")
		if r.code != 0 || r.stdout != "index.yaml: 2 packages, 3 versions, signed by 1 of 1, expires in 29 days\n" {
			t.Errorf("verify %s: %s", ref, r)
		}
	}
	// The old spelling, the index as the argument, still verifies, with a
	// notice; the index given twice, or not at all, is a usage error.
	r = runInProcess("repo", "verify", site, "--public-key", key+".pub")
	if want := "warning: kbuild repo verify: the index as an argument is deprecated and goes away in the next release; use --index " + site + "\n"; r.code != 0 || r.stderr != want || !strings.Contains(r.stdout, "2 packages, 3 versions") {
		t.Errorf("verify SITE (the old spelling): %s\nwant exit 0 and stderr %q", r, want)
	}
	for _, args := range [][]string{{"--index", site, site}, {}} {
		if r := runInProcess(append([]string{"repo", "verify", "--public-key", key + ".pub"}, args...)...); r.code != 2 || !strings.Contains(r.stderr, "verify takes one --index REF") {
			t.Errorf("verify %v: %s; want exit 2", args, r)
		}
	}

	// Two keys: the several-keys signature form and a threshold.
	site3 := filepath.Join(dir, "site3")
	if r := repoIndex(t, distDir, site3, "--sign-key", key+".key", "--sign-key-env", "SECOND_KEY"); r.code != 1 || !strings.Contains(r.stderr, "--sign-key-env SECOND_KEY: the variable is unset or empty") {
		t.Fatalf("unset --sign-key-env: %s", r)
	}
	priv2, _ := os.ReadFile(key2 + ".key")
	t.Setenv("SECOND_KEY", string(priv2))
	r = repoIndex(t, distDir, site3, "--sign-key", key+".key", "--sign-key-env", "SECOND_KEY")
	if r.code != 0 || !strings.Contains(r.stdout, "(keyids ") || strings.Contains(r.stdout+r.stderr, "PRIVATE") {
		t.Fatalf("two keys: %s", r)
	}
	sig3, _ := os.ReadFile(filepath.Join(site3, "index.yaml.sig"))
	mustContain(t, "index.yaml.sig", string(sig3), "signatures:\n- keyid: ")
	r = runInProcess("repo", "verify", "--index", site3, "--public-key", key+".pub", "--public-key", key2+".pub", "--threshold", "2")
	if r.code != 0 || !strings.Contains(r.stdout, "signed by 2 of 2") {
		t.Fatalf("verify 2 of 2: %s", r)
	}
}

func TestRepoIndexFlags(t *testing.T) {
	dir := t.TempDir()
	key := keygen(t, dir, "index")
	distDir := filepath.Join(dir, "dist")
	os.MkdirAll(distDir, 0o755)
	writeRecord(t, distDir, "kubevirt", "1.9.0", 4, "oci://r/kubevirt", hexDigest([]byte("c")))
	epochEnv(t, time.Hour)
	site := filepath.Join(dir, "site")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no key", nil, 0, "is not signed: kubepkg subscribers accept it only with allowUnsigned: true"},
		{"stdout with key", []string{"--sign-key", key + ".key", "-o", "-"}, 2, "a signed index needs a file to write index.yaml.sig beside"},
		{"relocate without an index", []string{"--relocate", "oci://a=oci://b"}, 2, "they need --index"},
		{"expires 0", []string{"--sign-key", key + ".key", "--expires", "0"}, 2, "a signed index must expire; to publish one that never does, pass --no-expiry"},
		{"no-expiry and expires", []string{"--sign-key", key + ".key", "--no-expiry", "--expires", "1h"}, 2, "contradict"},
		{"index without key", []string{"--index", site}, 2, "kbuild verifies the published index before it merges over it (kubepkg does not): add --public-key FILE (the public key that signed it), --root-key FILE (your pinned root keys) or --index-root FILE (your root.yaml)"},
		{"merge without key, old spelling", []string{"--merge", site}, 2, "warning: kbuild repo index: --merge is deprecated and goes away in the next release; use --index\nkbuild repo index: --index " + site + ": kbuild verifies the published index"},
		{"index with two ways", []string{"--sign-key", key + ".key", "--index", site, "--public-key", key + ".pub", "--index-root", key + ".pub"}, 2, "give one of --public-key, --root-key or --index-root"},
		{"merge with both, old spelling", []string{"--sign-key", key + ".key", "--merge", site, "--merge-public-key", key + ".pub", "--merge-root", key + ".pub"}, 2, "give one of --public-key, --root-key or --index-root"},
		{"keys without an index", []string{"--sign-key", key + ".key", "--public-key", key + ".pub"}, 2, "they need --index"},
		{"allow-new without an index", []string{"--sign-key", key + ".key", "--allow-new"}, 2, "they need --index"},
		{"public key to sign", []string{"--sign-key", key + ".pub"}, 1, `PEM block is "PUBLIC KEY", want "PRIVATE KEY"`},
	} {
		r := repoIndex(t, distDir, site, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: %s\nwant exit %d and %q", tc.name, r, tc.code, tc.want)
		}
	}
	// An epoch so old that the index would be born expired.
	t.Setenv("SOURCE_DATE_EPOCH", "1000000000")
	if r := repoIndex(t, distDir, site, "--sign-key", key+".key"); r.code != 1 || !strings.Contains(r.stderr, "which is past") {
		t.Errorf("expired at birth: %s", r)
	}
	if r := repoIndex(t, distDir, site, "--sign-key", key+".key", "--no-expiry"); r.code != 0 {
		t.Errorf("--no-expiry: %s", r)
	}
	data, _ := os.ReadFile(filepath.Join(site, "index.yaml"))
	if strings.Contains(string(data), "expires:") {
		t.Error("--no-expiry wrote expires")
	}
	// A component built from a path cannot enter a repository.
	rec, _ := os.ReadFile(filepath.Join(distDir, "kubevirt-1.9.0-4.yaml"))
	bad := strings.Replace(string(rec), "    - chart:", "    - path: charts/operator\n      chart:", 1)
	os.WriteFile(filepath.Join(distDir, "kubevirt-1.9.0-4.yaml"), []byte(bad), 0o644)
	if r := repoIndex(t, distDir, site, "--sign-key", key+".key", "--no-expiry"); r.code != 1 || !strings.Contains(r.stderr, `kubevirt-1.9.0-4.yaml: kubevirt 1.9.0 build 4: variant "default" component "operator" uses path "charts/operator"; in a repository every component names a chart pinned by digest; build the recipe with 'kbuild build'`) {
		t.Errorf("path component: %s", r)
	}
}

// TestRepoIndexUnsigned runs repo index as kubepkg's repo index runs: no
// key writes an unsigned index (and removes a stale signature), -o -
// writes it to stdout.
func TestRepoIndexUnsigned(t *testing.T) {
	dir := t.TempDir()
	key := keygen(t, dir, "index")
	distDir := filepath.Join(dir, "dist")
	os.MkdirAll(distDir, 0o755)
	writeRecord(t, distDir, "kubevirt", "1.9.0", 4, "oci://r/kubevirt", hexDigest([]byte("c")))
	epochEnv(t, time.Hour)
	site := filepath.Join(dir, "site")
	if r := repoIndex(t, distDir, site, "--sign-key", key+".key"); r.code != 0 {
		t.Fatal(r)
	}
	r := repoIndex(t, distDir, site)
	if r.code != 0 || !strings.Contains(r.stderr, "removed "+filepath.Join(site, "index.yaml")+".sig") {
		t.Fatalf("unsigned over a signed index: %s", r)
	}
	if _, err := os.Stat(filepath.Join(site, "index.yaml.sig")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale index.yaml.sig left: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(site, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := runInProcess("repo", "index", distDir, "-o", "-")
	if out.code != 0 || out.stdout != string(data) {
		t.Fatalf("-o -: %s\nwant stdout equal to the index written to a file", out)
	}
	if _, err := index.ParseIndex([]byte(out.stdout)); err != nil {
		t.Errorf("-o - wrote no index: %v", err)
	}
	if r := repoIndex(t, distDir, site, "--index", site, "--public-key", key+".pub", "--relocate", "r=s"); r.code != 2 || !strings.Contains(r.stderr, "want oci://OLD=oci://NEW") {
		t.Errorf("--relocate without oci://: %s", r)
	}
}

func TestRepoVerifyRefusals(t *testing.T) {
	dir := t.TempDir()
	key := keygen(t, dir, "index")
	distDir := filepath.Join(dir, "dist")
	os.MkdirAll(distDir, 0o755)
	writeRecord(t, distDir, "kubevirt", "1.9.0", 4, "oci://r/kubevirt", hexDigest([]byte("c")))
	epochEnv(t, time.Hour)
	site := filepath.Join(dir, "site")
	if r := repoIndex(t, distDir, site, "--sign-key", key+".key"); r.code != 0 {
		t.Fatal(r)
	}
	state := filepath.Join(dir, "state.json")
	if r := runInProcess("repo", "verify", "--index", site, "--public-key", key+".pub", "--state", state); r.code != 0 {
		t.Fatal(r)
	}
	st, _ := os.ReadFile(state)
	mustContain(t, "state", string(st), `"generated": "`)

	// An older index is a rollback for the recorded state.
	epochEnv(t, 2*time.Hour)
	old := filepath.Join(dir, "old")
	if r := repoIndex(t, distDir, old, "--sign-key", key+".key"); r.code != 0 {
		t.Fatal(r)
	}
	r := runInProcess("repo", "verify", "--index", old, "--public-key", key+".pub", "--state", state)
	if r.code != exitVerification || !strings.Contains(r.stderr, "refused: index.yaml: index generated") || !strings.Contains(r.stderr, "refusing a rollback") {
		t.Fatalf("rollback: %s", r)
	}
	if after, _ := os.ReadFile(state); string(after) != string(st) {
		t.Fatal("a refused index changed the state")
	}

	data, _ := os.ReadFile(filepath.Join(site, "index.yaml"))
	tampered := filepath.Join(dir, "tampered")
	os.MkdirAll(tampered, 0o755)
	os.WriteFile(filepath.Join(tampered, "index.yaml"), []byte(strings.Replace(string(data), "build: 4", "build: 5", 1)), 0o644)
	sig, _ := os.ReadFile(filepath.Join(site, "index.yaml.sig"))
	os.WriteFile(filepath.Join(tampered, "index.yaml.sig"), sig, 0o644)
	r = runInProcess("repo", "verify", "--index", tampered, "--public-key", key+".pub")
	if r.code != exitVerification || !strings.Contains(r.stderr, "refused: index.yaml: index is not signed by a trusted key") {
		t.Fatalf("tampered: %s", r)
	}
	os.Remove(filepath.Join(tampered, "index.yaml.sig"))
	r = runInProcess("repo", "verify", "--index", tampered, "--public-key", key+".pub")
	if r.code != exitVerification || !strings.Contains(r.stderr, "index.yaml.sig is missing") {
		t.Fatalf("unsigned: %s", r)
	}
	r = runInProcess("repo", "verify", "--index", filepath.Join(dir, "nowhere"), "--public-key", key+".pub")
	if r.code != exitFailed || !strings.Contains(r.stderr, "not found") {
		t.Fatalf("missing site: %s", r)
	}
	if r := runInProcess("repo", "verify", "--index", site); r.code != 2 {
		t.Fatalf("no keys: %s", r)
	}
}

// TestRepoWithdraw withdraws a version from a site written by repo index:
// a subscriber's verify accepts the new index, which no longer offers it,
// and repo index refuses to bring it back.
func TestRepoWithdraw(t *testing.T) {
	dir := t.TempDir()
	key := keygen(t, dir, "index")
	distDir := filepath.Join(dir, "dist")
	os.MkdirAll(distDir, 0o755)
	chart := hexDigest([]byte("chart"))
	writeRecord(t, distDir, "kubevirt", "1.9.0", 4, "oci://127.0.0.1:5000/kubevirt", chart)
	writeRecord(t, distDir, "kubevirt", "1.10.0", 1, "oci://127.0.0.1:5000/kubevirt", chart)
	epochEnv(t, time.Hour)
	site := filepath.Join(dir, "site")
	if r := repoIndex(t, distDir, site, "--sign-key", key+".key"); r.code != 0 {
		t.Fatal(r)
	}
	state := filepath.Join(dir, "state.json")
	if r := runInProcess("repo", "verify", "--index", site, "--public-key", key+".pub", "--state", state); r.code != 0 {
		t.Fatal(r)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"kubevirt"}, "withdraw takes one NAME@VERSION"},
		{[]string{"kubevirt@1.9.0", "--reason", "x"}, "--build N is required"},
		{[]string{"kubevirt@1.9.0", "--build", "4"}, "--reason TEXT is required"},
		{[]string{"kubevirt@1.9.0", "--build", "4", "--reason", "x"}, "withdraw needs the signing key"},
		{[]string{"kubevirt@1.9.0", "--build", "4", "--reason", "two\nlines", "--sign-key", key + ".key", "--site", site}, "--reason: the reason holds '\\n'"},
		{[]string{"kubevirt@1.9.0", "--build", "5", "--reason", "x", "--sign-key", key + ".key", "--site", site}, "kubevirt 1.9.0 build 5 is not in the index; nothing to withdraw"},
	} {
		if r := runInProcess(append([]string{"repo", "withdraw"}, tc.args...)...); r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("withdraw %q: %s\nwant %q", tc.args, r, tc.want)
		}
	}
	r := runInProcess("repo", "withdraw", "kubevirt@1.9.0", "--build", "4", "--reason", "breaks upgrades", "--sign-key", key+".key", "--site", site)
	if r.code != 0 || !strings.Contains(r.stdout, "withdrew kubevirt 1.9.0 build 4 (digest sha256:") {
		t.Fatalf("withdraw: %s", r)
	}
	// The subscriber accepts the newer index (its rollback state moves on).
	if r := runInProcess("repo", "verify", "--index", site, "--public-key", key+".pub", "--state", state); r.code != 0 || !strings.Contains(r.stdout, "1 packages, 1 versions") {
		t.Fatalf("verify after withdraw: %s", r)
	}
	r = repoIndex(t, distDir, filepath.Join(dir, "again"), "--sign-key", key+".key", "--index", filepath.Join(site, "index.yaml"), "--public-key", key+".pub")
	if r.code == 0 || !strings.Contains(r.stderr, "kubevirt 1.9.0 build 4 was withdrawn on") {
		t.Fatalf("repo index of a withdrawn record: %s", r)
	}
}

// TestRepoWithdrawSubscribers: withdraw says what kubepkg clusters running
// the withdrawn build do, for a Package following ~MAJOR.MINOR (what
// 'kubepkg install' writes) and one pinned to =VERSION, and each line
// agrees with the independent model of kubepkg's operator: it moves to
// the newest build left meeting spec.version, or keeps running the
// withdrawn build when none does.
func TestRepoWithdrawSubscribers(t *testing.T) {
	type rel struct {
		version string
		build   int
	}
	for _, tc := range []struct {
		name     string
		releases []rel
		withdraw rel
	}{
		{"another build of the version", []rel{{"1.9.0", 3}, {"1.9.0", 4}, {"1.8.2", 1}}, rel{"1.9.0", 4}},
		{"an older patch release", []rel{{"1.9.0", 4}, {"1.9.1", 1}}, rel{"1.9.1", 1}},
		{"nothing left in the minor", []rel{{"1.9.0", 4}, {"1.10.0", 1}}, rel{"1.9.0", 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			key := keygen(t, dir, "index")
			distDir := filepath.Join(dir, "dist")
			os.MkdirAll(distDir, 0o755)
			var model []kubepkgclient.Release
			for _, r := range tc.releases {
				writeRecord(t, distDir, "kubevirt", r.version, r.build, "oci://127.0.0.1:5000/kubevirt", hexDigest([]byte("chart")))
				model = append(model, kubepkgclient.Release{Package: "kubevirt", Version: r.version, Build: r.build})
			}
			epochEnv(t, time.Hour)
			site := filepath.Join(dir, "site")
			if r := repoIndex(t, distDir, site, "--sign-key", key+".key"); r.code != 0 {
				t.Fatal(r)
			}
			r := runInProcess("repo", "withdraw", "kubevirt@v"+tc.withdraw.version, "--build", strconv.Itoa(tc.withdraw.build), "--reason", "bad", "--sign-key", key+".key", "--site", site)
			if r.code != 0 {
				t.Fatal(r)
			}
			before := kubepkgclient.NewIndex(model...)
			after := before.Without("kubevirt", tc.withdraw.version, tc.withdraw.build)
			for _, c := range []string{kubepkgclient.DefaultConstraint(tc.withdraw.version), "=" + tc.withdraw.version} {
				cl, err := kubepkgclient.Install(before, "kubevirt", c)
				if err != nil {
					t.Fatal(err)
				}
				if got, _ := cl.Runs("kubevirt"); got.Version != tc.withdraw.version || got.Build != tc.withdraw.build {
					t.Fatalf("the model runs %s with %s before the withdrawal", got, c)
				}
				cl.Reconcile(after)
				got, _ := cl.Runs("kubevirt")
				want := fmt.Sprintf("kubepkg clusters running it with spec.version %q move to kubevirt %s build %d\n", c, got.Version, got.Build)
				if got.Version == tc.withdraw.version && got.Build == tc.withdraw.build {
					want = fmt.Sprintf("kubepkg clusters running it with spec.version %q keep running it: no build left meets %s", c, c)
				}
				if !strings.Contains(r.stdout, want) {
					t.Errorf("withdraw printed:\n%s\nwant (as the model of kubepkg does) %q", r.stdout, want)
				}
			}
		})
	}
}
