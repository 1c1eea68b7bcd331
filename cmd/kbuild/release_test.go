package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/internal/testenv"
)

const (
	releaseVersion = "v0.0.0-test"
	releaseCommit  = "0123456789abcdef0123456789abcdef01234567"
	releaseEpoch   = "1767225600" // 2026-01-01
)

// TestReleaseArchives runs scripts/release.sh twice for this machine's
// target (KBUILD_RELEASE_TARGETS; the release workflow builds all four):
// the archives are byte-identical, the
// SHA256SUMS file matches them (sha256sum -c), every tar entry is owned by
// 0:0 at SOURCE_DATE_EPOCH in sorted order, and the binary for this
// machine prints the stamped release and commit.
func TestReleaseArchives(t *testing.T) {
	host := runtime.GOOS + "/" + runtime.GOARCH
	var outs [2]string
	for i := range outs {
		outs[i] = filepath.Join(t.TempDir(), "release")
		r := runScript(t, repoRoot, []string{"SOURCE_DATE_EPOCH=" + releaseEpoch, "KBUILD_COMMIT=" + releaseCommit, "KBUILD_RELEASE_TARGETS=" + host}, "release.sh", releaseVersion, outs[i])
		if r.code != 0 {
			t.Fatalf("release.sh (build %d): %s", i+1, r)
		}
	}
	names, _ := filepath.Glob(filepath.Join(outs[0], "*"))
	var got []string
	for _, n := range names {
		got = append(got, filepath.Base(n))
	}
	want := []string{"SHA256SUMS", fmt.Sprintf("kbuild_0.0.0-test_%s_%s.tar.gz", runtime.GOOS, runtime.GOARCH)}
	if !slices.Equal(got, want) {
		t.Fatalf("release.sh wrote %v, want %v", got, want)
	}
	for _, n := range want {
		a, _ := os.ReadFile(filepath.Join(outs[0], n))
		b, _ := os.ReadFile(filepath.Join(outs[1], n))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two builds (%d and %d bytes)", n, len(a), len(b))
		}
	}
	sums, _ := os.ReadFile(filepath.Join(outs[0], "SHA256SUMS"))
	for _, n := range want[1:] {
		data, _ := os.ReadFile(filepath.Join(outs[0], n))
		sum := sha256.Sum256(data)
		if line := hex.EncodeToString(sum[:]) + "  " + n + "\n"; !strings.Contains(string(sums), line) {
			t.Errorf("SHA256SUMS lacks %q:\n%s", line, sums)
		}
	}
	check := exec.Command("sha256sum", "-c", "SHA256SUMS")
	check.Dir = outs[0]
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c SHA256SUMS: %v\n%s", err, out)
	}

	name := fmt.Sprintf("kbuild_0.0.0-test_%s_%s", runtime.GOOS, runtime.GOARCH)
	f, err := os.Open(filepath.Join(outs[0], name+".tar.gz"))
	if err != nil {
		t.Skipf("no release archive for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("gzip header has name %q and time %v; want neither", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	bin := filepath.Join(t.TempDir(), "kbuild")
	var entries []string
	epoch := time.Unix(1767225600, 0)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, h.Name)
		if h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(epoch) {
			t.Errorf("%s: owner %d:%d, mtime %v; want 0:0 at %v", h.Name, h.Uid, h.Gid, h.ModTime, epoch)
		}
		if h.Name == name+"/kbuild" {
			data, _ := io.ReadAll(tr)
			if err := os.WriteFile(bin, data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if wantEntries := []string{name + "/", name + "/CONTRIBUTING.md", name + "/README.md", name + "/kbuild"}; !slices.Equal(entries, wantEntries) {
		t.Errorf("archive entries %v, want %v", entries, wantEntries)
	}
	r := kbuildWith(t, bin, t.TempDir(), nil, "version")
	if wantV := "kbuild " + releaseVersion + "\ncommit: " + releaseCommit + "\n"; r.code != 0 || !strings.HasPrefix(r.stdout, wantV) {
		t.Errorf("kbuild version of the release binary: %s\nwant it to start with %q", r, wantV)
	}
	if runtime.GOOS == "linux" {
		checkActionInstall(t, outs[0])
	}
}

// checkActionInstall runs the action's install step (action-install.sh)
// against the release in dir served over HTTP as GitHub serves release
// downloads: it installs the release, keeps it when cached, and refuses
// (exit 4) an archive whose sha256 SHA256SUMS does not list. Then the
// action's test command validates the examples with what it installed.
func checkActionInstall(t *testing.T, dir string) {
	served := t.TempDir()
	if err := copyDir(dir, filepath.Join(served, releaseVersion)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(served)))
	defer srv.Close()
	dest := filepath.Join(t.TempDir(), "tool-cache")
	env := []string{"KBUILD_VERSION=" + releaseVersion, "KBUILD_RELEASES=" + srv.URL}
	r := runScript(t, t.TempDir(), env, "action-install.sh", dest)
	if r.code != 0 || strings.TrimSpace(r.stdout) != dest || !strings.Contains(r.stderr, "installed into "+dest) {
		t.Fatalf("action-install.sh: %s", r)
	}
	if v := kbuildWith(t, filepath.Join(dest, "kbuild"), t.TempDir(), nil, "version"); !strings.HasPrefix(v.stdout, "kbuild "+releaseVersion+"\n") {
		t.Errorf("installed kbuild: %s", v)
	}
	if r := runScript(t, t.TempDir(), env, "action-install.sh", dest); r.code != 0 || !strings.Contains(r.stderr, "cached in "+dest) {
		t.Errorf("action-install.sh with kbuild cached: %s", r)
	}
	examples := t.TempDir()
	if err := copyDir(filepath.Join(repoRoot, "examples"), filepath.Join(examples, "recipes")); err != nil {
		t.Fatal(err)
	}
	if r := runScript(t, examples, []string{"KBUILD=" + filepath.Join(dest, "kbuild"), "KBUILD_CACHE_DIR=" + t.TempDir()}, "action-run.sh", "test", "--offline"); r.code != 0 ||
		!strings.Contains(r.stdout, "0 of 3 recipes failed") {
		t.Errorf("action-run.sh test: %s", r)
	}
	// A tampered archive is refused and nothing is installed.
	name := fmt.Sprintf("kbuild_0.0.0-test_linux_%s.tar.gz", runtime.GOARCH)
	f, err := os.OpenFile(filepath.Join(served, releaseVersion, name), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("tampered"))
	f.Close()
	other := filepath.Join(t.TempDir(), "tool-cache")
	if r := runScript(t, t.TempDir(), env, "action-install.sh", other); r.code != 4 || !strings.Contains(r.stderr, "::error::kbuild "+releaseVersion+": "+name+" has sha256") {
		t.Errorf("action-install.sh of a tampered archive: %s", r)
	}
	if _, err := os.Stat(filepath.Join(other, "kbuild")); err == nil {
		t.Error("action-install.sh installed a tampered archive")
	}
}

// TestReleaseImage builds kbuild's image with `scripts/release.sh image`
// (ko, .ko.yaml) into the loopback registry, on a base image made here,
// twice: the same digest both times; crane and skopeo read it; the binary
// in its layer prints the stamped release.
func TestReleaseImage(t *testing.T) {
	reg := testenv.Registry(t)
	ko := testenv.Tool(t, "ko")
	crane := testenv.Tool(t, "crane")
	skopeo := testenv.Tool(t, "skopeo")
	repo := strings.TrimPrefix(uniqueRepo(t, reg), "oci://")

	// A base image with /tmp, as the release's base has.
	layer := filepath.Join(t.TempDir(), "base.tar")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "tmp/", Typeflag: tar.TypeDir, Mode: 0o1777})
	tw.Close()
	if err := os.WriteFile(layer, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	base := repo + "/base:test"
	if out, err := exec.Command(crane, "append", "-f", layer, "-t", base, "--insecure").CombinedOutput(); err != nil {
		t.Fatalf("crane append: %v\n%s", err, out)
	}
	if out, err := exec.Command(crane, "mutate", base, "--set-platform", "linux/"+runtime.GOARCH, "-t", base, "--insecure").CombinedOutput(); err != nil {
		t.Fatalf("crane mutate: %v\n%s", err, out)
	}
	env := []string{"SOURCE_DATE_EPOCH=" + releaseEpoch, "KBUILD_COMMIT=" + releaseCommit, "KO_DOCKER_REPO=" + repo + "/kbuild",
		"KO_DEFAULTBASEIMAGE=" + base, "KBUILD_PLATFORMS=linux/" + runtime.GOARCH,
		"PATH=" + filepath.Dir(ko) + string(os.PathListSeparator) + os.Getenv("PATH")}
	var refs [2]string
	for i := range refs {
		r := runScript(t, repoRoot, env, "release.sh", "image", releaseVersion)
		if r.code != 0 {
			t.Fatalf("release.sh image: %s", r)
		}
		refs[i] = strings.TrimSpace(r.stdout)
	}
	if !strings.HasPrefix(refs[0], repo+"/kbuild@sha256:") || refs[0] != refs[1] {
		t.Fatalf("two image builds: %q and %q, want the same %s/kbuild@sha256:… reference", refs[0], refs[1], repo)
	}
	if out, err := exec.Command(skopeo, "inspect", "--tls-verify=false", "docker://"+refs[0]).CombinedOutput(); err != nil ||
		!strings.Contains(string(out), `"Architecture": "`+runtime.GOARCH+`"`) {
		t.Fatalf("skopeo inspect %s: %v\n%s", refs[0], err, out)
	}
	export := exec.Command(crane, "export", refs[0], "-", "--insecure")
	var fs bytes.Buffer
	export.Stdout = &fs
	if err := export.Run(); err != nil {
		t.Fatalf("crane export %s: %v", refs[0], err)
	}
	bin := filepath.Join(t.TempDir(), "kbuild")
	tr := tar.NewReader(&fs)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("no ko-app/kbuild in the image's filesystem: %v", err)
		}
		if strings.TrimPrefix(h.Name, "/") == "ko-app/kbuild" {
			data, _ := io.ReadAll(tr)
			if err := os.WriteFile(bin, data, 0o755); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	r := kbuildWith(t, bin, t.TempDir(), nil, "version")
	if want := "kbuild " + releaseVersion + "\ncommit: " + releaseCommit + "\n"; r.code != 0 || !strings.HasPrefix(r.stdout, want) {
		t.Errorf("kbuild version in the image: %s\nwant it to start with %q", r, want)
	}
}
