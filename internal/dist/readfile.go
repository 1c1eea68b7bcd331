package dist

import "fmt"

// grow returns buf with length n, reallocated (with room to spare) when
// its capacity is short.
func grow(buf []byte, n int) []byte {
	if cap(buf) < n {
		return make([]byte, n, n+n/2)
	}
	return buf[:n]
}

// tooLarge is the error for a file over its limit.
func tooLarge(p string, size, limit int64) error {
	return fmt.Errorf("%s: %d bytes, more than the %d allowed", p, size, limit)
}
