// Package depcheck holds the test that keeps kbuild's package graph
// pointing one way: cmd/kbuild on top; builder over sources and patches;
// index a leaf that imports nothing of kbuild; site, sbom and the sources
// never reaching up into builder or cmd. It has no code of its own.
package depcheck
