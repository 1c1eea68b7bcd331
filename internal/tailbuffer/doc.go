// Package tailbuffer keeps the end of a child process's output: the part
// that says why it failed, whatever the process printed before.
//
// A Buffer is an io.Writer that keeps the last N bytes written to it;
// String returns them, beginning after a line break when one is near the
// start so that the message does not open in the middle of a line.
package tailbuffer
