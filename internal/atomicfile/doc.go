// Package atomicfile replaces files whole or not at all.
//
// A file is written to a temporary file in the directory of its final
// path, synced, given its permissions and renamed over the path; the
// directory is then synced so that the rename survives a crash. A reader
// sees the old file or the new one, never a half-written one, and a write
// that fails leaves the old file as it was and no temporary file behind.
//
// WriteFile does this for bytes in memory; Create returns a File to stream
// into, which Commit puts in place and Abort throws away.
package atomicfile
