package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// Targets of kbuild publish over the 100k base on the reference machine.
const (
	targetPublish = 15 * time.Second
	siteFactor    = 2.5 // the whole site at most this many times index.yaml
)

// publishRun is one measured publish and the requests the site got.
type publishRun struct {
	m        *measurement
	requests int64
	target   time.Duration
}

// benchPublish measures kbuild publish over the 100k-version site that
// repo index wrote: first over the bare index (every catalog page is
// written), then one new recipe and nothing new with the base in --site,
// then one new recipe and nothing new with the base behind --index URL
// served over loopback and the site directory restored from the previous
// publish (as CI restores it). It returns the runs and the site's size.
func benchPublish(bin, work, site, keyFile, pubFile string, env []string) ([]publishRun, error) {
	recipes := filepath.Join(work, "recipes")
	os.RemoveAll(recipes)
	os.RemoveAll(filepath.Join(work, "pubdist"))
	addRecipe := func(name string) error {
		dir := filepath.Join(recipes, name)
		files := map[string]string{
			"recipe.yaml":             fmt.Sprintf("apiVersion: kubepkg.dev/v1\nkind: Recipe\nmetadata:\n  name: %[1]s\nspec:\n  version: 1.0.0\n  build: 1\n  sources:\n    chart: {dir: chart}\n  charts:\n    %[1]s: {from: [chart]}\n  package:\n    rollback: {safe: true}\n    variants:\n      - name: default\n        components: [{name: %[1]s, path: %[1]s}]\n", name),
			"chart/Chart.yaml":        "apiVersion: v2\nname: " + name + "\nversion: 0.1.0\n",
			"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n",
		}
		for p, c := range files {
			p = filepath.Join(dir, p)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	publish := func(name, siteDir string, extra ...string) (*measurement, error) {
		args := append([]string{bin, "publish", recipes, "--site", siteDir, "--sign-key", keyFile, "-o", filepath.Join(work, "pubdist"), "--cache-dir", filepath.Join(work, "cache"), "--site-keep", strconv.Itoa(*siteKeep),
			// One index at the site root: not the suites.yaml of the
			// repository the bench runs in.
			"--suites", filepath.Join(work, "no-suites.yaml")}, extra...)
		return measure(env, name, args...)
	}
	var runs []publishRun
	if err := addRecipe("new-a"); err != nil {
		return nil, err
	}
	m, err := publish("publish, first over the bare 100k index", site)
	if err != nil {
		return nil, err
	}
	runs = append(runs, publishRun{m: m})
	if err := addRecipe("new-b"); err != nil {
		return nil, err
	}
	for _, name := range []string{"publish one new recipe, base in --site", "publish nothing new, base in --site"} {
		m, err := publish(name, site)
		if err != nil {
			return nil, err
		}
		runs = append(runs, publishRun{m: m, target: targetPublish})
	}

	// The base behind --index URL, over loopback, counting requests.
	// It serves the restored directory, as if each publish were deployed
	// at once: the next one's base is what the previous one wrote.
	restored := filepath.Join(work, "site-restored")
	os.RemoveAll(restored)
	if out, err := exec.Command("cp", "-a", site, restored).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("cp -a: %v: %s", err, out)
	}
	var requests atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	files := http.FileServer(http.Dir(restored))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		files.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	if err := addRecipe("new-c"); err != nil {
		return nil, err
	}
	merge := []string{"--index", "http://" + ln.Addr().String() + "/index.yaml", "--public-key", pubFile}
	for _, name := range []string{"publish one new recipe, --index URL", "publish nothing new, --index URL"} {
		requests.Store(0)
		m, err := publish(name, restored, merge...)
		if err != nil {
			return nil, err
		}
		runs = append(runs, publishRun{m: m, requests: requests.Load(), target: targetPublish})
	}
	return runs, nil
}

// sysIno returns the inode of fi, to count hard links once.
func sysIno(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Ino, true
}
