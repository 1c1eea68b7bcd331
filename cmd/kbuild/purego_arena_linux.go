//go:build cgo

package main

// One malloc arena for a cgo binary on glibc, so that it starts under
// ulimit -v 1G as the pure-Go release binary does (TestCgoStartsUnderLimit).
//
// Why: glibc gives every thread that calls malloc while another holds the
// main arena an arena of its own, and each costs 64 MiB of address space
// (128 MiB while it is being aligned). The Go runtime of a cgo binary
// starts its threads with pthread_create, which mallocs, so a trivial
// command reserved one to four of them, on top of the 761 MiB the runtime
// reserves anyway (bench/README.md): it failed before main, about one start
// in ten, with "runtime: out of memory".
//
// Why here: a constructor runs from __libc_start_main before it calls main,
// and with cgo main is the Go runtime's entry (a package that imports "C"
// is linked externally), so mallopt has run before the runtime makes its
// first thread and no arena but the main one is ever made. Setting
// MALLOC_ARENA_MAX in the environment would do the same but cannot be
// asked of everyone who runs a `go build`.
//
// What stays: each thread's C stack (8 MiB of address space, ulimit -s);
// the release binary, built with CGO_ENABLED=0, has neither (cgoWarning).
// Other C libraries (musl) have no per-thread arenas and no M_ARENA_MAX.

/*
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

__attribute__((constructor)) static void kbuild_one_malloc_arena(void) {
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
	mallopt(M_ARENA_MAX, 1);
#endif
}
*/
import "C"
