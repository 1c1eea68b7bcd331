// Command hostile generates kbuild's corpus of hostile inputs and runs
// kbuild on each case under a memory cap and a deadline, failing when a
// case is accepted that must be refused, crashes (a Go runtime fatal error
// or panic), exceeds the cap or runs past the deadline, or prints an
// unbounded line. Nothing large is committed: every case is written at run
// time into a temporary directory, and the servers the cases need (chart
// repositories, stalling registries, endless bodies) run on loopback in
// this process.
//
//	go run ./scripts/hostile -kbuild BIN [-mem 1073741824] [-deadline 30s] [-run REGEXP]
//
// scripts/test.sh builds kbuild and runs this in CI. The kbuild binary must
// be built with CGO_ENABLED=0: with cgo, glibc reserves 64 MiB of address
// space per thread for malloc arenas and 8 MiB per thread stack, and a Go
// program with a few threads does not even start under ulimit -v 1 GiB.
package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// hostileCase is one input and the kbuild command run on it.
type hostileCase struct {
	name string
	// setup writes the case under dir and returns kbuild's arguments.
	setup func(c *corpus, dir string) []string
	// want is a substring the refusal must contain; "" means the command
	// must succeed.
	want string
	// code is the exit status of the refusal; 0 accepts any documented
	// failure status (1 failed, 3 refused, 4 verification failed, 5
	// unavailable), never 2 (usage).
	code int
	// says is a substring the output must hold, whether the command
	// succeeds or not ("" for none).
	says string
	// never is a substring the output must not hold ("" for none).
	never string
}

// corpus holds what the cases share: the kbuild binary and the servers.
type corpus struct {
	kbuild  string
	base    string // http://127.0.0.1:PORT
	files   map[string][]byte
	release chan struct{}
}

func main() {
	kbuild := flag.String("kbuild", "", "kbuild binary to run (built with CGO_ENABLED=0)")
	mem := flag.Int64("mem", 1<<30, "address-space cap of each case in bytes (ulimit -v)")
	deadline := flag.Duration("deadline", 30*time.Second, "deadline of each case")
	run := flag.String("run", "", "run only the cases matching this regular expression")
	flag.Parse()
	if *kbuild == "" {
		fmt.Fprintln(os.Stderr, "usage: hostile -kbuild BIN")
		os.Exit(2)
	}
	if err := pureGo(*kbuild); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	match, err := regexp.Compile(*run)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	work, err := os.MkdirTemp("", "kbuild-hostile-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(work)
	c := &corpus{kbuild: *kbuild, files: map[string][]byte{}, release: make(chan struct{})}
	if err := c.serve(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer close(c.release)
	failed := 0
	ran := 0
	for _, hc := range append(cases, siteCases...) {
		if !match.MatchString(hc.name) {
			continue
		}
		ran++
		dir := filepath.Join(work, strings.ReplaceAll(hc.name, " ", "-"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		args := hc.setup(c, dir)
		start := time.Now()
		res := c.runCase(dir, args, *mem, *deadline)
		took := time.Since(start).Round(10 * time.Millisecond)
		if msg := judge(hc, res); msg != "" {
			failed++
			fmt.Printf("FAIL %-40s %6s  %s\n     kbuild %s\n     stderr: %s\n", hc.name, took, msg, strings.Join(args, " "), clip(res.stderr, 600))
		} else {
			fmt.Printf("ok   %-40s %6s  exit %d: %s\n", hc.name, took, res.code, clip(firstLine(res.stderr), 150))
		}
		os.RemoveAll(dir)
	}
	fmt.Printf("%d cases, %d failed (cap %d MiB, deadline %s each)\n", ran, failed, *mem>>20, *deadline)
	if failed > 0 {
		os.Exit(1)
	}
}

// pureGo refuses a kbuild binary built with cgo: the corpus tests the
// binary users get, which is pure Go.
func pureGo(bin string) error {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("%s: %w", bin, err)
	}
	for _, s := range info.Settings {
		if s.Key == "CGO_ENABLED" && s.Value != "0" {
			return fmt.Errorf("%s was built with CGO_ENABLED=%s; build it with CGO_ENABLED=0, as users get it", bin, s.Value)
		}
	}
	return nil
}

type result struct {
	code     int
	stderr   string
	timedOut bool
}

// runCase runs kbuild with args in dir under ulimit -v mem and deadline.
func (c *corpus) runCase(dir string, args []string, mem int64, deadline time.Duration) result {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	script := fmt.Sprintf("ulimit -v %d && exec \"$0\" \"$@\"", mem>>10)
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", script, c.kbuild}, args...)...)
	cmd.Dir = dir
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "KBUILD_") {
			env = append(env, e)
		}
	}
	cmd.Env = append(env, "CI=true", "TMPDIR="+filepath.Join(dir, "tmp"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "HOME="+dir)
	os.MkdirAll(filepath.Join(dir, "tmp"), 0o755)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr // messages go to either
	err := cmd.Run()
	res := result{stderr: stderr.String(), timedOut: ctx.Err() != nil}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		res.code = -1
		res.stderr += "\n" + err.Error()
	}
	return res
}

// judge returns why a case failed, or "".
func judge(hc hostileCase, r result) string {
	switch {
	case r.timedOut:
		return "ran past the deadline"
	case strings.Contains(r.stderr, "fatal error:") || strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine 1 ["):
		return "crashed"
	case r.code < 0:
		return "killed by a signal"
	}
	for _, l := range strings.Split(r.stderr, "\n") {
		if len(l) > 4096 {
			return fmt.Sprintf("printed a line of %d bytes", len(l))
		}
	}
	if hc.says != "" && !strings.Contains(r.stderr, hc.says) {
		return fmt.Sprintf("did not say %q", hc.says)
	}
	if hc.never != "" && strings.Contains(r.stderr, hc.never) {
		return fmt.Sprintf("said %q", hc.never)
	}
	if hc.want == "" {
		if r.code != 0 {
			return fmt.Sprintf("exit %d, want success", r.code)
		}
		return ""
	}
	if r.code == 0 {
		return "accepted, want a refusal"
	}
	if !strings.Contains(r.stderr, hc.want) {
		return fmt.Sprintf("refused without saying %q", hc.want)
	}
	if want := hc.code; want != 0 && r.code != want || want == 0 && !refusalStatus(r.code) {
		return fmt.Sprintf("refused with exit %d, want %s", r.code, wantStatus(want))
	}
	return ""
}

// serve starts the loopback server the cases use: /files/... serves
// c.files, /stall/... sends headers and stalls, /endless/... never ends,
// /paged/... paginates without end, /away/... redirects off loopback.
func (c *corpus) serve() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	c.base = "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("/files/", func(w http.ResponseWriter, r *http.Request) {
		b, ok := c.files[strings.TrimPrefix(r.URL.Path, "/files/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	})
	// stall sends the headers and one byte of a manifest, then nothing.
	stall := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		w.Header().Set("Content-Length", "100000")
		w.Write([]byte("{"))
		w.(http.Flusher).Flush()
		select {
		case <-c.release:
		case <-r.Context().Done():
		}
	}
	mux.HandleFunc("/stall/", stall)
	// lying says its body is 5 bytes long and sends 16 KiB, which Go's
	// client logs ("Unsolicited response received on idle HTTP channel")
	// unless kbuild silences it.
	mux.HandleFunc("/lying/", func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\n")
		buf.Write(bytes.Repeat([]byte("lying "), 16<<10/6))
		buf.Flush()
		time.Sleep(2 * time.Second)
	})
	mux.HandleFunc("/v2/", func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		hold := func() {
			select {
			case <-c.release:
			case <-r.Context().Done():
			}
		}
		switch {
		case p == "/v2/": // a registry that needs no token
			w.WriteHeader(http.StatusOK)
		case strings.HasPrefix(p, "/v2/busy/"): // a registry that answers 503 to everything
			w.WriteHeader(http.StatusServiceUnavailable)
		case strings.HasPrefix(p, "/v2/endless/"): // a manifest without end
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			chunk := bytes.Repeat([]byte(" "), 1<<20)
			w.Write([]byte("{"))
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case strings.HasPrefix(p, "/v2/pushpatch/"), strings.HasPrefix(p, "/v2/pushput/"):
			// A registry that has nothing and takes uploads, then stalls:
			// pushpatch in a blob PATCH (it stops reading), pushput on
			// the manifest PUT (read, never answered; blobs are there).
			patch := strings.HasPrefix(p, "/v2/pushpatch/")
			switch {
			case strings.Contains(p, "/manifests/") && r.Method == http.MethodPut:
				io.Copy(io.Discard, r.Body)
				hold()
			case strings.Contains(p, "/manifests/"):
				http.NotFound(w, r)
			case strings.Contains(p, "/blobs/uploads/") && r.Method == http.MethodPost:
				w.Header().Set("Location", strings.SplitAfter(p, "/uploads/")[0]+"u1")
				w.WriteHeader(http.StatusAccepted)
			case strings.Contains(p, "/blobs/uploads/"):
				io.CopyN(io.Discard, r.Body, 16)
				hold()
			case strings.Contains(p, "/blobs/") && !patch:
				w.Header().Set("Content-Length", "1")
				w.Header().Set("Docker-Content-Digest", strings.SplitAfter(p, "/blobs/")[1])
			default:
				http.NotFound(w, r)
			}
		default:
			stall(w, r)
		}
	})
	// drip sends one byte a second, never silent for a --timeout of a
	// few seconds, for ever.
	mux.HandleFunc("/drip/", func(w http.ResponseWriter, r *http.Request) {
		for r.Context().Err() == nil {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(time.Second)
		}
	})
	mux.HandleFunc("/endless/", func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	// paged answers a GitHub-style releases API whose Link header always
	// names one more page.
	mux.HandleFunc("/paged/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", fmt.Sprintf("<%s%s?page=%d>; rel=\"next\"", c.base, r.URL.Path, len(r.URL.RawQuery)))
		w.Write([]byte(`[{"tag_name":"v1.0.0","assets":[]}]`))
	})
	// away redirects off loopback.
	mux.HandleFunc("/away/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://203.0.113.9/pub/", http.StatusFound)
	})
	go http.Serve(ln, mux)
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// refusalStatus reports whether code is one of kbuild's documented failure
// statuses (README "Exit status"): 1, 3, 4 or 5.
func refusalStatus(code int) bool { return code == 1 || code >= 3 && code <= 5 }

func wantStatus(code int) string {
	if code == 0 {
		return "1, 3, 4 or 5"
	}
	return fmt.Sprint(code)
}
