package publish

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/builder/render"
	"kbuild.dev/kbuild/internal/kubepkgclient"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/trust"
)

// The crash test runs this test binary again as a publish that stops at a
// phase (KBUILD_CRASH_CHILD), and kills it there with SIGKILL.
func TestMain(m *testing.M) {
	render.WorkerMain()
	if phase := os.Getenv("KBUILD_CRASH_CHILD"); phase != "" {
		os.Exit(crashChild(phase))
	}
	os.Exit(m.Run())
}

func crashChild(phase string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "child:", err); return 1 }
	work := os.Getenv("KBUILD_CRASH_WORK")
	pem, err := os.ReadFile(filepath.Join(work, "index.key"))
	if err != nil {
		return fail(err)
	}
	key, err := trust.ParsePrivateKey(pem)
	if err != nil {
		return fail(err)
	}
	epoch, _ := strconv.ParseInt(os.Getenv("KBUILD_CRASH_EPOCH"), 10, 64)
	fixed, _ := strconv.ParseInt(os.Getenv("KBUILD_CRASH_NOW"), 10, 64)
	now = func() time.Time { return time.Unix(fixed, 0) }
	pause := func(p string) {
		if p == phase {
			fmt.Println("paused at " + p)
			select {} // until killed
		}
	}
	pauseAt = pause
	wrap := func(t oci.Target) oci.Target { return &pauseAfterPush{Target: t, pause: pause} }
	p, err := testPublisher(work, os.Getenv("KBUILD_CRASH_REGISTRY"), key, time.Unix(epoch, 0), "site", wrap, os.Stderr, os.Stderr)
	if err != nil {
		return fail(err)
	}
	if _, err := p.Publish(context.Background(), filepath.Join(work, "recipes")); err != nil {
		return fail(err)
	}
	fmt.Println("done")
	return 0
}

// pauseAfterPush pauses after the first chart push that succeeds.
type pauseAfterPush struct {
	oci.Target
	pause func(string)
}

func (t *pauseAfterPush) Push(ctx context.Context, repo, tag string, img v1.Image) error {
	err := t.Target.Push(ctx, repo, tag, img)
	if err == nil {
		t.pause("first push")
	}
	return err
}

// checkSite checks what a subscriber could read from the site at this
// instant: index.yaml verifies with the signature named by its digest,
// every chart it pins is in the registry, and index.yaml.sig signs
// index.yaml as a kubepkg subscriber reads the pair (kubepkgclient).
func (f *fixture) checkSite(site, when string) {
	f.t.Helper()
	dir := filepath.Join(f.work, site)
	data, err := os.ReadFile(filepath.Join(dir, sitelayout.IndexFile))
	if err != nil {
		f.t.Fatalf("%s: %v", when, err)
	}
	tr := &trust.Trust{IndexKeys: []*trust.PublicKey{f.key.Public()}}
	byHash, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(sitelayout.ByHashSignatureFile(data))))
	if err != nil {
		f.t.Fatalf("%s: the signature of index.yaml by its digest: %v", when, err)
	}
	v, err := trust.Verify(data, byHash, tr, trust.VerifyOptions{Now: time.Now()})
	if err != nil {
		f.t.Fatalf("%s: index.yaml does not verify: %v", when, err)
	}
	f.checkPullable(v.Index)
	sig, err := os.ReadFile(filepath.Join(dir, sitelayout.SignatureFile))
	if err != nil {
		f.t.Fatalf("%s: %v", when, err)
	}
	if err := kubepkgclient.VerifyWithKeys(data, sig, []string{string(f.key.Public().PEM())}); err != nil {
		f.t.Errorf("%s: a kubepkg subscriber refuses index.yaml with index.yaml.sig: %v", when, err)
	}
}

// TestPublishCrash kills a publish with SIGKILL at each phase, checks the
// site at the kill point and after it, and re-runs the publish: the result
// is byte for byte that of an uninterrupted publish.
func TestPublishCrash(t *testing.T) {
	for _, phase := range []string{"first push", "pushed", "sbom", "by-hash", "both signatures", "index"} {
		t.Run(phase, func(t *testing.T) {
			f := newE2EFixture(t)
			fixed := time.Now().UTC().Truncate(time.Second)
			now = func() time.Time { return fixed }
			defer func() { now = time.Now }()
			pem, _ := f.key.MarshalPEM()
			if err := os.WriteFile(filepath.Join(f.work, "index.key"), pem, 0o600); err != nil {
				t.Fatal(err)
			}
			f.recipe("alpha", "1.0.0", 1)
			if _, err := f.publish("site", nil); err != nil {
				t.Fatal(err)
			}
			if err := os.CopyFS(filepath.Join(f.work, "ref"), os.DirFS(filepath.Join(f.work, "site"))); err != nil {
				t.Fatal(err)
			}
			f.recipe("beta", "2.0.0", 1)
			f.recipe("gamma", "3.0.0", 1)

			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "KBUILD_CRASH_CHILD="+phase, "KBUILD_CRASH_WORK="+f.work, "KBUILD_CRASH_REGISTRY="+f.registry,
				"KBUILD_CRASH_EPOCH="+strconv.FormatInt(f.epoch.Unix(), 10), "KBUILD_CRASH_NOW="+strconv.FormatInt(fixed.Unix(), 10))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if strings.TrimSpace(line) != "paused at "+phase {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the child did not stop at %s: %q %v\n%s", phase, line, err, stderr.String())
			}
			f.checkSite("site", "paused at "+phase)
			cmd.Process.Signal(syscall.SIGKILL)
			go io.Copy(io.Discard, out)
			cmd.Wait()
			f.checkSite("site", "killed at "+phase)

			f.epoch = f.epoch.Add(0)
			if _, err := f.publish("site", nil); err != nil {
				t.Fatalf("re-run after the kill: %v", err)
			}
			if _, err := f.publish("ref", nil); err != nil {
				t.Fatalf("uninterrupted publish: %v", err)
			}
			f.checkSite("site", "after the re-run")
			for _, file := range []string{sitelayout.IndexFile, sitelayout.SignatureFile, sitelayout.RepositoryBOMFile, sitelayout.SBOMFile("beta", "2.0.0", 1), sitelayout.ProvenanceFile("gamma", "3.0.0", 1), "packages/beta.html", "index.html"} {
				got, _ := os.ReadFile(filepath.Join(f.work, "site", file))
				want, err := os.ReadFile(filepath.Join(f.work, "ref", file))
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s after a kill at %s and a re-run differs from an uninterrupted publish's (%v)", file, phase, err)
				}
			}
			if got := versionsOf(f.verified("site")); len(got) != 3 {
				t.Errorf("after the re-run the index holds %v", got)
			}
			filepath.WalkDir(filepath.Join(f.work, "site"), func(path string, d fs.DirEntry, err error) error {
				if err == nil && isTemp(d.Name()) {
					t.Errorf("temporary file left after the re-run: %s", path)
				}
				return nil
			})
		})
	}
}
