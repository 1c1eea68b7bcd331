package testenv

import (
	"fmt"
	"net"
	"testing"
	"time"
)

// TestGitDaemonStops checks that nothing serves the daemon's port once
// the test that started it has ended: killing only the git process would
// leave git-daemon, its child, listening.
func TestGitDaemonStops(t *testing.T) {
	var port int
	t.Run("serve", func(t *testing.T) { port = GitDaemon(t, t.TempDir()) })
	if port == 0 {
		t.Skip("no git daemon started")
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return
		}
		c.Close()
		if i == 20 {
			t.Fatalf("%s still accepts connections after the test that started git daemon ended", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
