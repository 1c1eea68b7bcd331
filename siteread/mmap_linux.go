package siteread

import (
	"os"
	"syscall"
)

// mapMinSize is the size from which a spooled body is mapped, not read back.
var mapMinSize int64 = 64 << 20

// mapFile maps a large file read-only, its pages loaded at once, and
// reports whether it did. The mapping lasts until Release, or as long as
// the process: parsed indexes share the bytes (the YAML reader's strings
// point into them), and they are the bytes whose signature was checked.
// A shared mapping shows every later write to the file, so only a file
// that no other process can open is mapped: one with no name left
// (unlinked: the temporary file spool wrote), which f is the only way to.
// Any other file is not mapped (see ReadFile). Writing to the bytes
// faults.
func mapFile(f *os.File, size int64) ([]byte, bool) {
	if size < mapMinSize || size != int64(int(size)) {
		return nil, false
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil || st.Nlink != 0 {
		return nil, false
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return nil, false
	}
	mapped.Store(&b[0], fileMapping)
	return b, true
}

// anonBuffer returns size bytes of private anonymous memory, outside the
// Go heap, and reports whether it did: a large local index is read into
// it, so that its size is reserved once, not rounded up to the heap's
// arenas (a 256 MiB slice reserves 320 MiB more of address space), and no
// file's later writes can show in it (it is a copy). Release unmaps it.
func anonBuffer(size int64) ([]byte, bool) {
	if size < mapMinSize || size != int64(int(size)) {
		return nil, false
	}
	b, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, false
	}
	mapped.Store(&b[0], anonMapping)
	return b, true
}

func unmap(b []byte) { syscall.Munmap(b[:cap(b)]) }
