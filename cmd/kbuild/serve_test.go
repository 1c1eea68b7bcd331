package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/chart"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/site"
)

// serveFixture lays out what a build and a publish leave in a project:
// dist/oci with one chart pushed by the builder's layout target, and _site
// with the catalog and index.yaml.
type serveFixture struct {
	dir      string // the project, kbuild's working directory
	archive  *builder.Archive
	manifest string // digest of the chart's OCI manifest
}

func newServeFixture(t *testing.T) *serveFixture {
	t.Helper()
	dir := t.TempDir()
	epoch := time.Unix(1700000000, 0).UTC()

	chartDir := filepath.Join(t.TempDir(), "demo")
	for name, body := range map[string]string{
		"Chart.yaml":               "apiVersion: v2\nname: demo\nversion: 1.0.0-1\ntype: application\n",
		"values.yaml":              "greeting: hello\n",
		"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
	} {
		p := filepath.Join(chartDir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, err := builder.Pack(chartDir, "demo", "1.0.0-1", epoch)
	if err != nil {
		t.Fatalf("Pack: %v", err)
	}
	img, err := oci.ChartImage(a.Data, &chart.Metadata{APIVersion: "v2", Name: "demo", Version: "1.0.0-1", Type: "application"}, epoch)
	if err != nil {
		t.Fatal(err)
	}
	target, err := oci.NewLayoutTarget(filepath.Join(dir, "dist", "oci"), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := target.Push(context.Background(), "kbuild/demo", "1.0.0-1", img); err != nil {
		t.Fatal(err)
	}
	md, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}

	siteDir := filepath.Join(dir, "_site")
	idx := &index.RepositoryIndex{Generated: epoch, Packages: map[string]*index.IndexPackage{"demo": {Description: "a demo"}}}
	if err := site.Write(siteDir, idx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(siteDir, "index.yaml"), []byte("apiVersion: kubepkg.dev/v1alpha1\nkind: RepositoryIndex\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &serveFixture{dir: dir, archive: a, manifest: md.String()}
}

var servingRE = regexp.MustCompile(`^serving (.*) on http://(127\.0\.0\.1:\d+)$`)

// startServe runs the kbuild binary's serve in dir and returns the address
// it listens on, the process, and its stderr so far.
func startServe(t *testing.T, dir string, args ...string) (addr string, cmd *exec.Cmd, stderr func() string) {
	t.Helper()
	cmd = exec.Command(kbuildBin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	lines := make(chan string, 100)
	var all bytes.Buffer
	go func() {
		s := bufio.NewScanner(pipe)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("kbuild serve exited before serving:\n%s", all.String())
			}
			all.WriteString(line + "\n")
			if m := servingRE.FindStringSubmatch(line); m != nil {
				go io.Copy(io.Discard, pipe)
				return m[2], cmd, func() string { return all.String() }
			}
		case <-timeout:
			t.Fatalf("kbuild serve printed no serving line in 30s:\n%s", all.String())
		}
	}
}

func get(t *testing.T, method, url string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestServe runs `kbuild serve` as a process on a built layout and a
// written site, reads both through it with net/http, go-containerregistry
// and the helm CLI, and stops it with SIGINT.
func TestServe(t *testing.T) {
	f := newServeFixture(t)
	addr, cmd, stderr := startServe(t, f.dir)
	if want := "serving _site/ and dist/oci on http://" + addr + "\n"; stderr() != want {
		t.Errorf("stderr = %q, want %q", stderr(), want)
	}
	base := "http://" + addr

	for _, tc := range []struct {
		name, method, path string
		want               int
		wantType, wantBody string
	}{
		{"site root", "GET", "/", 200, "text/html; charset=utf-8", `href="packages/demo.html"`},
		{"package page", "GET", "/packages/demo.html", 200, "text/html; charset=utf-8", "a demo"},
		{"index.yaml", "GET", "/index.yaml", 200, "application/yaml; charset=utf-8", "RepositoryIndex"},
		{"stylesheet", "GET", "/style.css", 200, "text/css; charset=utf-8", ""},
		{"no listing", "GET", "/packages/", 404, "", ""},
		{"dot dot refused", "GET", "/packages/../../dist/oci/index.json", 400, "", ""},
		{"site is read-only", "PUT", "/index.html", 405, "", ""},
		{"registry base", "GET", "/v2/", 200, "application/json", "{}"},
		{"manifest", "HEAD", "/v2/kbuild/demo/manifests/1.0.0-1", 200, "application/vnd.oci.image.manifest.v1+json", ""},
		{"chart archive", "GET", "/v2/kbuild/demo/blobs/" + f.archive.Digest, 200, "application/octet-stream", ""},
		{"tags", "GET", "/v2/kbuild/demo/tags/list", 200, "application/json", `{"name":"kbuild/demo","tags":["1.0.0-1"]}`},
		{"unknown tag", "GET", "/v2/kbuild/demo/manifests/9.9.9", 404, "application/json", "MANIFEST_UNKNOWN"},
		{"registry is read-only", "POST", "/v2/kbuild/demo/blobs/uploads/", 405, "application/json", "UNSUPPORTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := base + tc.path
			req, err := http.NewRequest(tc.method, url, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.URL.Opaque = tc.path // keep ".." as sent
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("%s %s = %d, want %d\n%s", tc.method, tc.path, resp.StatusCode, tc.want, body)
			}
			if tc.wantType != "" && resp.Header.Get("Content-Type") != tc.wantType {
				t.Errorf("Content-Type = %q, want %q", resp.Header.Get("Content-Type"), tc.wantType)
			}
			if !strings.Contains(string(body), tc.wantBody) {
				t.Errorf("body lacks %q: %.300s", tc.wantBody, body)
			}
		})
	}

	t.Run("go-containerregistry", func(t *testing.T) {
		ref, err := name.ParseReference(addr+"/kbuild/demo:1.0.0-1", name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		desc, err := remote.Get(ref)
		if err != nil {
			t.Fatalf("remote.Get(%s): %v", ref, err)
		}
		if desc.Digest.String() != f.manifest {
			t.Errorf("manifest digest = %s, want %s", desc.Digest, f.manifest)
		}
	})

	t.Run("helm pull", func(t *testing.T) {
		for _, h := range testenv.Helms(t) {
			t.Run(h.Name, func(t *testing.T) {
				helm := h.Path
				home := t.TempDir()
				for _, ref := range [][]string{
					{"oci://" + addr + "/kbuild/demo", "--version", "1.0.0-1"},
					{"oci://" + addr + "/kbuild/demo@" + f.manifest},
				} {
					out := t.TempDir()
					args := append(append([]string{"pull"}, ref...), "--plain-http", "--destination", out)
					c := exec.Command(helm, args...)
					c.Env = append(os.Environ(), "HOME="+home,
						"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
						"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
						"HELM_DATA_HOME="+filepath.Join(home, "data"),
						"HELM_REGISTRY_CONFIG="+filepath.Join(home, "registry.json"))
					b, err := c.CombinedOutput()
					if err != nil {
						t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, b)
					}
					files, _ := filepath.Glob(filepath.Join(out, "*.tgz"))
					if len(files) != 1 {
						t.Fatalf("helm %s wrote %v, want one archive\n%s", strings.Join(args, " "), files, b)
					}
					got, _ := os.ReadFile(files[0])
					if !bytes.Equal(got, f.archive.Data) {
						t.Errorf("helm %s: archive differs from the one built", strings.Join(args, " "))
					}
				}
			})
		}
	})

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("kbuild serve after SIGINT: %v (want exit 0)\n%s", err, stderr())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("kbuild serve did not stop within 15s of SIGINT")
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after kbuild serve stopped", addr)
	}
}

func TestServeErrors(t *testing.T) {
	f := newServeFixture(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	notLayout := t.TempDir()

	for _, tc := range []struct {
		name string
		dir  string // working directory
		args []string
		code int
		want string // in stderr
	}{
		{"arguments", f.dir, []string{"serve", "extra"}, 2, `serve takes no arguments, got "extra"`},
		{"named site missing", f.dir, []string{"serve", "--site", "public"}, 1, "serve --site public:"},
		{"named layout not a layout", f.dir, []string{"serve", "--layout", notLayout}, 1, "is it an OCI image layout"},
		{"address in use", f.dir, []string{"serve", "--addr", busy.Addr().String()}, 1, "pass --addr"},
		{"defaults missing", t.TempDir(), []string{"serve", "--addr", "127.0.0.1:0"}, 1, "nothing to serve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(tc.dir)
			r := runInProcess(tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("kbuild %s: %s\nwant exit %d and stderr containing %q", strings.Join(tc.args, " "), r, tc.code, tc.want)
			}
		})
	}
}

// TestServeDefaultsSkipped checks that a missing default directory is
// skipped with a warning and the other is still served; it stops kbuild
// serve by cancelling its context.
func TestServeDefaultsSkipped(t *testing.T) {
	f := newServeFixture(t)
	os.RemoveAll(filepath.Join(f.dir, "_site"))
	t.Chdir(f.dir)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, &Env{Stdout: io.Discard, Stderr: pw, Getenv: os.Getenv}, []string{"serve", "--addr", "127.0.0.1:0"})
		pw.Close()
	}()
	s := bufio.NewScanner(pr)
	var got []string
	var addr string
	for s.Scan() {
		got = append(got, s.Text())
		if m := servingRE.FindStringSubmatch(s.Text()); m != nil {
			addr = m[2]
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if addr == "" {
		t.Fatalf("no serving line: %q", got)
	}
	want := []string{
		"warning: _site does not exist; not serving it (pass --site to choose another)",
		"serving dist/oci on http://" + addr,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stderr = %q, want %q", got, want)
	}
	if resp, _ := get(t, "GET", "http://"+addr+"/index.html"); resp.StatusCode != 404 {
		t.Errorf("GET /index.html without a site = %d, want 404", resp.StatusCode)
	}
	if resp, _ := get(t, "GET", "http://"+addr+"/v2/kbuild/demo/tags/list"); resp.StatusCode != 200 {
		t.Errorf("GET tags = %d, want 200", resp.StatusCode)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("kbuild serve after cancel = exit %d, want 0", code)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("kbuild serve did not return within 15s of cancellation")
	}
}
