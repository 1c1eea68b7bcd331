package main

import (
	"fmt"
	"io"
)

// cgoWarning warns, on w, a binary built with cgo that runs under a finite
// address-space limit (ulimit -v): kbuild is pure Go and released built
// with CGO_ENABLED=0. A plain `go build` on a machine with a C compiler
// makes a cgo binary; it starts under 1 GiB as the release binary does
// (its glibc keeps one malloc arena: purego_arena_linux.go), but each of
// its threads reserves 8 MiB for a C stack (ulimit -s), about 60 MiB
// more than the release binary for a trivial command, so under a tighter
// limit it fails first. limit is the address-space limit in bytes, or 0
// for none (addrspace.Now).
func cgoWarning(w io.Writer, cgo bool, limit uint64) {
	if !cgo || limit == 0 {
		return
	}
	fmt.Fprintf(w, "kbuild: warning: this binary was built with cgo and runs under an address-space limit of %d MiB (ulimit -v), of which each thread's C stack takes 8 MiB, unlike the release binary's; build it with CGO_ENABLED=0 (see README)\n", limit>>20)
}
