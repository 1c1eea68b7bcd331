// Command outdated measures kbuild outdated over 100 recipes against
// upstreams on loopback (bench/outdated/run.sh): 25 follow charts of one
// Helm repository index, 25 GitHub-style release APIs (three pages each),
// 25 HTTP directory listings, 15 git repositories served by git daemon and
// 10 image repositories in a docker-registry. It prints the wall time of
// each run of the kbuild binary given, and of kbuild version (start-up),
// measured apart.
//
//	go run ./bench/outdated -kbuild /tmp/kbuild -registry 127.0.0.1:5000 -runs 5
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func main() {
	kbuild := flag.String("kbuild", "", "kbuild binary (CGO_ENABLED=0)")
	registry := flag.String("registry", "", "docker-registry host:port on loopback")
	runs := flag.Int("runs", 5, "runs of each measurement")
	kinds := flag.String("kinds", "helm,github,listing,git,oci", "upstream kinds to include (to measure them apart)")
	flag.Parse()
	if *kbuild == "" || *registry == "" {
		log.Fatal("-kbuild and -registry are required")
	}
	work, err := os.MkdirTemp("", "bench-outdated-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)

	base := serve()
	gitURL, stop := gitDaemon(work, 15)
	defer stop()
	pushImages(*registry, 10)

	recipes := filepath.Join(work, "recipes")
	n := 0
	add := func(upstream string) {
		if !slices.Contains(strings.Split(*kinds, ","), strings.SplitN(upstream, ":", 2)[0]) {
			return
		}
		n++
		dir := filepath.Join(recipes, fmt.Sprintf("r%03d", n))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "recipe.yaml"), []byte(fmt.Sprintf("apiVersion: kubepkg.dev/v1\nkind: Recipe\nmetadata:\n  name: r%03d\n  annotations: {kubepkg.dev/description: \"bench\"}\nspec:\n  version: 1.0.0\n  build: 1\n  package:\n    rollback: {safe: true}\n    variants: [{name: default}]\n", n)), 0o644)
		os.WriteFile(filepath.Join(dir, "watch.yaml"), []byte("apiVersion: kbuild.dev/v1alpha1\nkind: Watch\nupstream:\n  "+upstream+"\n  versions: {strip: [v], constraint: \"~1\"}\n"), 0o644)
	}
	for i := 0; i < 25; i++ {
		add(fmt.Sprintf("helm: {repository: %q, chart: chart-%d}", base+"/helm", i))
		add(fmt.Sprintf("github: {repository: org/repo-%d, api: %q}", i, base))
		add(fmt.Sprintf("listing: {url: %q}", fmt.Sprintf("%s/pub/%d/", base, i)))
	}
	for i := 0; i < 15; i++ {
		add(fmt.Sprintf("git: {url: %q}", fmt.Sprintf("%s/repo-%d.git", gitURL, i)))
	}
	for i := 0; i < 10; i++ {
		add(fmt.Sprintf("oci: {repository: %q}", fmt.Sprintf("%s/bench/app-%d", *registry, i)))
	}

	var cpu time.Duration
	measure := func(args ...string) []time.Duration {
		var ds []time.Duration
		cpu = 0
		for i := 0; i < *runs; i++ {
			cmd := exec.Command(*kbuild, args...)
			cmd.Dir = work
			start := time.Now()
			out, err := cmd.CombinedOutput()
			d := time.Since(start)
			cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			var ee *exec.ExitError
			if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 6) {
				log.Fatalf("kbuild %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			if i == 0 && args[0] == "outdated" {
				var reports []struct {
					Upstreams []struct{ Outdated bool } `json:"upstreams"`
				}
				if err := json.Unmarshal(out, &reports); err != nil {
					log.Fatalf("%v\n%s", err, out)
				}
				outdated := 0
				for _, r := range reports {
					if len(r.Upstreams) == 1 && r.Upstreams[0].Outdated {
						outdated++
					}
				}
				if len(reports) != n || outdated != n {
					log.Fatalf("%d reports, %d outdated; want %d and %d\n%s", len(reports), outdated, n, n, out)
				}
			}
			ds = append(ds, d)
		}
		slices.Sort(ds)
		return ds
	}
	startup := measure("version")
	outdated := measure("outdated", "recipes", "--plain-http", "--format", "json")
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("kbuild version (start-up): median %s, min %s\n", startup[len(startup)/2].Round(time.Millisecond), startup[0].Round(time.Millisecond))
	fmt.Printf("kbuild outdated, %d recipes (%s): median %s, min %s, max %s; CPU (user+sys, kbuild and the git it runs) %s a run\n", n, *kinds, outdated[len(outdated)/2].Round(time.Millisecond), outdated[0].Round(time.Millisecond), outdated[len(outdated)-1].Round(time.Millisecond), (cpu / time.Duration(*runs)).Round(time.Millisecond))
	fmt.Printf("load average: %s", load)
}

// serve starts the HTTP upstreams: /helm/index.yaml with 25 charts of
// 40 versions, /repos/org/repo-N/releases with 60 releases in pages of
// 20 (Link headers), and /pub/N/ listings of 40 entries.
func serve() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	var idx strings.Builder
	idx.WriteString("apiVersion: v1\nentries:\n")
	for c := 0; c < 25; c++ {
		fmt.Fprintf(&idx, "  chart-%d:\n", c)
		for v := 0; v < 40; v++ {
			fmt.Fprintf(&idx, "  - apiVersion: v2\n    name: chart-%d\n    version: 1.%d.%d\n    appVersion: \"2.%d\"\n    digest: %064d\n    urls: [chart-%d-1.%d.%d.tgz]\n", c, v/4, v%4, v, v, c, v/4, v%4)
		}
	}
	index := []byte(idx.String())
	mux := http.NewServeMux()
	mux.HandleFunc("/helm/index.yaml", func(w http.ResponseWriter, r *http.Request) { w.Write(index) })
	mux.HandleFunc("/repos/", func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		page = max(page, 1)
		var rel []string
		for i := (page - 1) * 20; i < page*20; i++ {
			rel = append(rel, fmt.Sprintf(`{"tag_name":"v1.%d.%d","draft":false,"prerelease":%t,"assets":[{"name":"op.yaml","browser_download_url":"%s/d/op.yaml","size":100,"digest":"sha256:%064d"}]}`, 20-i/3, i%3, i%7 == 0, base, i))
		}
		if page < 3 {
			w.Header().Set("Link", fmt.Sprintf(`<%s%s?per_page=100&page=%d>; rel="next"`, base, r.URL.Path, page+1))
		}
		fmt.Fprintf(w, "[%s]", strings.Join(rel, ","))
	})
	mux.HandleFunc("/pub/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html><body><pre><a href=\"../\">../</a>\n")
		for v := 0; v < 40; v++ {
			fmt.Fprintf(w, "<a href=\"v1.%d.%d/\">v1.%d.%d/</a>  01-Dec-2026 10:00  -\n", v/4, v%4, v/4, v%4)
		}
		fmt.Fprint(w, "<a href=\"latest/\">latest/</a>\n</pre></body></html>\n")
	})
	go http.Serve(ln, mux)
	return base
}

// gitDaemon makes n repositories with 30 tags each and serves them.
func gitDaemon(work string, n int) (string, func()) {
	root := filepath.Join(work, "git")
	run := func(dir string, args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=b", "-c", "user.email=b@b", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			log.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	seed := filepath.Join(root, "seed")
	os.MkdirAll(seed, 0o755)
	run(seed, "init", "-q")
	for v := 0; v < 30; v++ {
		run(seed, "commit", "-q", "--allow-empty", "-m", strconv.Itoa(v))
		run(seed, "tag", fmt.Sprintf("v1.%d.%d", v/3, v%3))
	}
	for i := 0; i < n; i++ {
		run(root, "clone", "-q", "--bare", seed, fmt.Sprintf("repo-%d.git", i))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	d := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), "--base-path="+root, root)
	// Its own process group, killed whole: git runs git-daemon as a child.
	d.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.Start(); err != nil {
		log.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Sprintf("git://127.0.0.1:%d", port), func() { syscall.Kill(-d.Process.Pid, syscall.SIGKILL); d.Wait() }
}

// pushImages pushes 30 tags of n image repositories bench/app-N.
func pushImages(registry string, n int) {
	img, err := random.Image(64, 1)
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < n; i++ {
		for v := 0; v < 30; v++ {
			ref, err := name.NewTag(fmt.Sprintf("%s/bench/app-%d:v1.%d.%d", registry, i, v/3, v%3), name.Insecure)
			if err != nil {
				log.Fatal(err)
			}
			if err := remote.Write(ref, img); err != nil {
				log.Fatal(err)
			}
		}
	}
}
