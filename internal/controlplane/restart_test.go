package controlplane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKwokRestart checks that kwok's start-up race (kwokRaced) is told
// from other exits, and that restart puts the new process in the old
// one's place and keeps the old log.
func TestKwokRestart(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := func(name, body string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return f
	}
	raced := script("raced", "echo 'fatal error: concurrent map writes'; echo 'github.com/wzshiming/easycel.getTypeValue'; exit 2")
	other := script("other", "echo 'fatal error: concurrent map writes'; echo 'somewhere else'; exit 2")
	c := &Cluster{Dir: dir}
	t.Cleanup(c.Stop)
	first, err := c.start("etcd", "sleep", "60")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		bin  string
		want bool
	}{{raced, true}, {other, false}} {
		p, err := c.start("kwok", tc.bin)
		if err != nil {
			t.Fatal(err)
		}
		<-p.done
		if got := kwokRaced(p); got != tc.want {
			t.Errorf("kwokRaced(%s) = %v, want %v", filepath.Base(tc.bin), got, tc.want)
		}
		c.procs = c.procs[:1]
	}
	if kwokRaced(first) {
		t.Error("kwokRaced(a running process) = true")
	}

	p, err := c.start("kwok", raced)
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.restart(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.procs) != 2 || c.procs[0] != first || c.procs[1] != q || q == p {
		t.Fatalf("after restart the processes are %v, want [etcd, the new kwok]", c.procs)
	}
	<-q.done
	old, err := os.ReadFile(c.LogFile("kwok") + ".1")
	if err != nil || !strings.Contains(string(old), "easycel") {
		t.Errorf("the first kwok's log is not kept as kwok.log.1: %q, %v", old, err)
	}
}
