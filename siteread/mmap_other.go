//go:build !linux

package siteread

import "os"

// mapFile reads files on systems other than Linux.
func mapFile(*os.File, int64) ([]byte, bool) { return nil, false }

// anonBuffer leaves buffers to the Go heap on systems other than Linux.
func anonBuffer(int64) ([]byte, bool) { return nil, false }

func unmap([]byte) {}
