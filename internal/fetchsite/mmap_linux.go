package fetchsite

import (
	"os"
	"syscall"
)

// mapMinSize is the size from which a local file is mapped, not read.
var mapMinSize int64 = 64 << 20

// mapFile maps a large regular file read-only, its pages loaded at once,
// and reports whether it did. The mapping lasts until Release, or as long
// as the process: parsed indexes share the bytes. Writing to them faults.
func mapFile(f *os.File, size int64) ([]byte, bool) {
	if size < mapMinSize || size != int64(int(size)) {
		return nil, false
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return nil, false
	}
	mapped.Store(&b[0], true)
	return b, true
}

func unmap(b []byte) { syscall.Munmap(b) }
