// Package netdeadline puts deadlines on HTTP transfers that a stalled or
// trickling server cannot stretch.
//
// Transport wraps an http.RoundTripper so that every response, whoever
// reads it (kbuild's own downloads, go-containerregistry's manifest and blob
// reads, a site fetch), is bounded three ways: connecting, the TLS
// handshake and waiting for the response headers each take at most the
// idle timeout; the body fails once no byte has arrived for the idle
// timeout; and the whole body fails once it takes longer than its budget,
// the idle timeout plus one second per MiB (of the announced length, or of
// what has arrived so far when none is announced), so a server that sends a
// byte every few seconds is cut off soon after the idle timeout too. The error wraps ErrStalled and says
// what was waited on.
package netdeadline
