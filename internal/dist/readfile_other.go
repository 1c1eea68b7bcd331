//go:build !linux

package dist

import (
	"fmt"
	"io"
	"os"
)

// readCapped reads the regular file p of at most limit bytes into buf
// (grown as needed).
func readCapped(p string, limit int64, buf []byte) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return buf, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return buf, err
	}
	if !fi.Mode().IsRegular() {
		return buf, fmt.Errorf("%s: not a regular file", p)
	}
	if fi.Size() > limit {
		return buf, tooLarge(p, fi.Size(), limit)
	}
	buf = grow(buf, int(fi.Size()))
	if _, err := io.ReadFull(f, buf); err != nil {
		return buf, fmt.Errorf("%s: %w", p, err)
	}
	return buf, nil
}
