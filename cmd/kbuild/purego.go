package main

import (
	"fmt"
	"io"
)

// cgoWarning warns, on w, a binary built with cgo that runs under a finite
// address-space limit (ulimit -v): kbuild is pure Go and released built
// with CGO_ENABLED=0. With cgo, glibc reserves 64 MiB of address space per
// thread that calls malloc and 8 MiB per thread stack, so under a 1 GiB
// limit such a binary fails to start now and then ("runtime: out of
// memory"). A plain `go build` on a machine with a C compiler makes one.
// limit is the address-space limit in bytes, or 0 for none
// (addrspace.Now).
func cgoWarning(w io.Writer, cgo bool, limit uint64) {
	if !cgo || limit == 0 {
		return
	}
	fmt.Fprintf(w, "kbuild: warning: this binary was built with cgo and runs under an address-space limit of %d MiB (ulimit -v), under which a cgo binary may fail to start; build it with CGO_ENABLED=0 (see README)\n", limit>>20)
}
