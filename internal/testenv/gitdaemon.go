package testenv

import (
	"fmt"
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// GitDaemon serves the repositories under base with a real git daemon on
// a free loopback port, until the test ends, and returns the port. The
// daemon runs in its own process group, which the cleanup kills whole:
// `git daemon` runs git-daemon as a child, and killing only the git
// process it started would leave that child serving after the test.
func GitDaemon(t testing.TB, base string) int {
	t.Helper()
	git := Tool(t, "git")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	daemon := exec.Command(git, "daemon", "--reuseaddr", "--export-all", "--listen=127.0.0.1",
		fmt.Sprintf("--port=%d", port), "--base-path="+base, base)
	daemon.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := daemon.Start(); err != nil {
		t.Fatalf("git daemon: %v", err)
	}
	t.Cleanup(func() {
		syscall.Kill(-daemon.Process.Pid, syscall.SIGKILL)
		daemon.Wait()
	})
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return port
		}
		if i == 200 {
			t.Fatalf("git daemon does not listen on 127.0.0.1:%d", port)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
