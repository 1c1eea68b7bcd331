// Package addrspace says whether reading an input of a given size fits in
// the address space the process may still map under its address-space
// limit (ulimit -v, RLIMIT_AS), so that an input too large for the limit
// is refused before it is read, with a message naming the limit, instead
// of the Go runtime failing with "out of memory" half-way through.
//
// Without a limit (the default on most machines) every size fits: the
// readers' own size limits apply.
package addrspace

import (
	"fmt"

	"kbuild.dev/kbuild/internal/fault"
)

// ErrTooLarge is wrapped by the error of an input that does not fit.
var ErrTooLarge = fault.New(fault.Refused, "too large for the address-space limit")

// Cost is what reading and using an input takes in address space, beyond
// what the process has mapped when it starts: PerByte bytes for each byte
// of the input, plus Fixed. The costs are measured (bench/README.md, "Large
// bases under a 1 GiB address-space cap") and rounded up.
type Cost struct {
	// PerByte is the address space taken for each byte of the input.
	PerByte float64
	// Fixed is what is taken whatever the size (Go heap arenas are
	// reserved 64 MiB at a time).
	Fixed int64
	// Use names what the input is read for, in messages ("verifying an
	// index").
	Use string
}

// need is the address space an input of size bytes takes.
func (c Cost) need(size int64) int64 { return int64(float64(size)*c.PerByte) + c.Fixed }

// Room is the address space the process may still map: its limit and
// what it has mapped. Limited is false when there is no limit (or it
// cannot be read), and then every size fits.
type Room struct {
	Limited bool
	Limit   int64 // RLIMIT_AS, bytes
	Mapped  int64 // VmSize now, bytes
}

// Now returns the room of the running process.
func Now() Room { return now() }

// Free is how much more the process may map.
func (r Room) Free() int64 { return max(r.Limit-r.Mapped, 0) }

// MaxSize returns the largest input that fits at cost c, and whether
// there is a limit at all (when not, every size fits).
func (r Room) MaxSize(c Cost) (int64, bool) {
	if !r.Limited {
		return 0, false
	}
	return max(int64(float64(r.Free()-c.Fixed)/c.PerByte), 0), true
}

// Check returns nil when an input of size bytes fits at cost c, else an
// *Error wrapping ErrTooLarge. size < 0 (unknown) always fits: read it
// with MaxSize as its limit.
func (r Room) Check(size int64, c Cost) error {
	if !r.Limited || size < 0 || c.need(size) <= r.Free() {
		return nil
	}
	return &Error{Size: size, Cost: c, Room: r}
}

// Error is the refusal of an input that does not fit.
type Error struct {
	// Size is the input's size in bytes, or -1 when only more than the
	// largest that fits was read.
	Size int64
	Cost Cost
	Room Room
}

func (e *Error) Error() string {
	mib := func(n int64) int64 { return (n + 1<<20 - 1) >> 20 }
	maxSize, _ := e.Room.MaxSize(e.Cost)
	size := fmt.Sprintf("%d bytes", e.Size)
	if e.Size < 0 {
		size = fmt.Sprintf("more than %d bytes", maxSize)
	}
	need := e.Cost.need(max(e.Size, maxSize+1))
	return fmt.Sprintf("%s, more than the %d MiB that fit under this process's address-space limit: %s takes about %.4g bytes of memory per byte of input plus %d MiB, %d MiB here, and the limit (ulimit -v) is %d MiB of which %d MiB are mapped already; raise it to at least %d MiB, or run without it",
		size, maxSize>>20, e.Cost.Use, e.Cost.PerByte, e.Cost.Fixed>>20, mib(need), e.Room.Limit>>20, mib(e.Room.Mapped), mib(e.Room.Mapped+need))
}

func (e *Error) Unwrap() error { return ErrTooLarge }
