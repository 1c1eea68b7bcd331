//go:build !linux

package addrspace

// now reports no limit where the limit and the mapped size are not read.
func now() Room { return Room{} }
