//go:build cgo

package main

// builtWithCgo reports a binary built with cgo (see cgoWarning).
const builtWithCgo = true
