package siteread

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/addrspace"
	"kbuild.dev/kbuild/trust"
)

// childEnv names the site directory the test runs in a child process, under
// an address-space limit of its own.
const childEnv = "KBUILD_FETCHSITE_ADDRSPACE_CHILD"

// TestIndexOverAddressSpaceLimit: under ulimit -v, an index that does not
// fit is refused before it is read — a message naming the file and the
// limit, an error wrapping addrspace.ErrTooLarge — where reading it ran
// the process out of memory; an index that fits is still verified. The
// checks run in a child process whose RLIMIT_AS is 192 MiB above what it
// has mapped; the big index is a sparse file of 512 MiB (no disk taken),
// with a signature file of the right form and key.
func TestIndexOverAddressSpaceLimit(t *testing.T) {
	if dir := os.Getenv(childEnv); dir != "" {
		underLimit(t, dir)
		return
	}
	k, err := trust.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	sigOf := func(b []byte) []byte {
		sigs, err := trust.Sign(b, k)
		if err != nil {
			t.Fatal(err)
		}
		out, err := index.MarshalSignatures(sigs)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	dir := t.TempDir()
	write := func(name string, b []byte) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("key.pub", k.Public().PEM())
	x, err := index.NewBuilder().Index(time.Now().Add(-time.Hour).UTC().Truncate(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	small, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	write("small/index.yaml", small)
	write("small/index.yaml.sig", sigOf(small))
	write("big/index.yaml.sig", sigOf([]byte("not these bytes")))
	f, err := os.Create(filepath.Join(dir, "big/index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(512 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestIndexOverAddressSpaceLimit$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+dir, "GOMAXPROCS=2")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child under the limit failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// underLimit runs in the child: it lowers its own address-space limit and
// reads the sites in dir.
func underLimit(t *testing.T, dir string) {
	pem, err := os.ReadFile(filepath.Join(dir, "key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := trust.ParsePublicKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	tr := &trust.Trust{IndexKeys: []*trust.PublicKey{pub}}
	room := addrspace.Now()
	if room.Limited {
		t.Fatalf("the child already has an address-space limit: %+v", room)
	}
	room.Mapped = vmSizeNow(t)
	limit := uint64(room.Mapped + 192<<20)
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		t.Fatal(err)
	}
	opts := trust.VerifyOptions{Now: time.Now(), DiscardIndex: true}
	for _, tc := range []struct {
		name string
		read func(*Site) error
	}{
		{"repo verify", func(s *Site) error { _, err := s.Verify(context.Background(), tr, opts); return err }},
		{"publish over it", func(s *Site) error {
			_, _, err := s.IndexChecked(context.Background(), func(sig []byte) error { return trust.PrecheckIndexSignature(sig, tr, opts) })
			return err
		}},
	} {
		s, err := New(filepath.Join(dir, "big"))
		if err != nil {
			t.Fatal(err)
		}
		err = tc.read(s)
		loc := filepath.Join(dir, "big", "index.yaml")
		if !errors.Is(err, addrspace.ErrTooLarge) || !strings.Contains(err.Error(), loc) || !strings.Contains(err.Error(), "ulimit -v") {
			t.Errorf("%s: the 512 MiB index under a limit 192 MiB above the mapped size = %v, want a refusal wrapping addrspace.ErrTooLarge naming %s and the limit", tc.name, err, loc)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
		s, err = New(filepath.Join(dir, "small"))
		if err != nil {
			t.Fatal(err)
		}
		if err := tc.read(s); err != nil {
			t.Errorf("%s: a small index under the limit = %v, want accepted", tc.name, err)
		}
	}
}

// vmSizeNow returns VmSize of the running process.
func vmSizeNow(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmSize:"); ok {
			var kb int64
			for _, c := range strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")) {
				kb = kb*10 + int64(c-'0')
			}
			return kb << 10
		}
	}
	t.Fatal("no VmSize in /proc/self/status")
	return 0
}
