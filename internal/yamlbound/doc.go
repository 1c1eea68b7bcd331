// Package yamlbound bounds the work a parsed YAML document can cause.
//
// A YAML parser builds a node tree in time and memory linear in its input,
// but an alias refers back to an anchored node, and a walk that follows
// aliases (a decoder, a schema check) can visit exponentially many nodes:
// a 1 KB "billion laughs" document expands to 10^9 scalars. Check walks the
// tree once, following aliases, and stops as soon as the walk exceeds a
// budget taken from the size of the input or a nesting limit. An alias-free
// document never exceeds it; a bomb is refused after a bounded amount of
// work.
package yamlbound
