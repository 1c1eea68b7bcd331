package main

import (
	"bytes"
	"io"
)

// stdlogFilter is what the standard logger writes through: libraries
// kbuild uses log with it. Go's HTTP client logs "Unsolicited response
// received on idle HTTP channel starting with …" with up to 16 KB of what a
// server sent past its Content-Length; that server is lying, and kbuild's
// own error about the transfer says what matters, so those lines are
// dropped. Other lines pass, cut to maxLogLine bytes.
type stdlogFilter struct{ w io.Writer }

// maxLogLine bounds a line a library logs.
const maxLogLine = 1024

func (f stdlogFilter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("Unsolicited response received on idle HTTP channel")) {
		return len(p), nil
	}
	line := p
	if len(line) > maxLogLine {
		line = append(append([]byte{}, line[:maxLogLine]...), []byte("…\n")...)
	}
	if _, err := f.w.Write(line); err != nil {
		return 0, err
	}
	return len(p), nil
}
