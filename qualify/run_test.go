package qualify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestDigestLogConcurrent: Helm logs from goroutines of its own; the
// qualification's log keeps each line whole and its digest is the
// digest of the bytes the log holds.
func TestDigestLogConcurrent(t *testing.T) {
	var out bytes.Buffer
	log := newDigestLog(&out)
	r := &run{log: log}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				r.logf("goroutine %d line %d: %s", g, i, strings.Repeat("x", i%97))
			}
		}()
	}
	wg.Wait()
	sum := sha256.Sum256(out.Bytes())
	if got, want := log.digest(), "sha256:"+hex.EncodeToString(sum[:]); got != want {
		t.Errorf("digest %s, want %s (the log's bytes)", got, want)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8*2000 {
		t.Fatalf("%d lines, want %d", len(lines), 8*2000)
	}
	for _, l := range lines {
		var g, i int
		head, xs, ok := strings.Cut(l, ": ")
		if _, err := fmt.Sscanf(head, "goroutine %d line %d", &g, &i); err != nil || !ok && i%97 != 0 || xs != strings.Repeat("x", i%97) {
			t.Fatalf("line %q is not whole", l)
		}
	}
}
