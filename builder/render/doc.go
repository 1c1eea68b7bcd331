// Package render renders a packed chart as Helm would install it, with its
// default values, against a Kubernetes version and API set, and reads the
// objects, images and CRDs out of the output.
//
// Rendering runs in worker processes (this executable, started again), each
// bounded in time, memory and output per chart, so a hostile template
// cannot take kbuild down with it: every program that renders calls
// WorkerMain first thing. Sprig's random functions are made deterministic
// (see norandom.go), so the same chart renders the same bytes every time.
package render
