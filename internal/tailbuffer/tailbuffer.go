package tailbuffer

import (
	"bytes"
	"sync"
)

// Buffer keeps the last n bytes written to it. It is safe for concurrent
// use (a process's stdout and stderr may share one). The zero Buffer keeps
// nothing; make one with New.
type Buffer struct {
	mu sync.Mutex
	b  []byte
	n  int
	// cut is set once bytes were dropped from the start.
	cut bool
}

// New returns a Buffer that keeps the last n bytes written to it.
func New(n int) *Buffer { return &Buffer{n: n} }

// Write keeps the end of p and never fails. It copies at most twice the
// size kept, however much is written.
func (t *Buffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(p) > t.n {
		t.b = append(t.b[:0], p[len(p)-t.n:]...)
		t.cut = true
		return len(p), nil
	}
	t.b = append(t.b, p...)
	if len(t.b) > 2*t.n {
		t.b = append(t.b[:0], t.b[len(t.b)-t.n:]...)
		t.cut = true
	}
	return len(p), nil
}

// String returns the last n bytes written; when more was written, it
// starts after a line break when one is in the first half of them.
func (t *Buffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, cut := t.b, t.cut
	if len(p) > t.n {
		p, cut = p[len(p)-t.n:], true
	}
	if !cut {
		return string(p)
	}
	if i := bytes.IndexByte(p, '\n'); i >= 0 && i < t.n/2 {
		p = p[i+1:]
	}
	return string(p)
}
