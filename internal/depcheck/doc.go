// Package depcheck holds the tests that keep kbuild's package graph
// pointing one way: cmd/kbuild on top; builder over sources and patches;
// index a leaf that imports nothing of kbuild but internal/atomicfile
// (standard library only); site, sbom and the sources
// never reaching up into builder or cmd. It has no code of its own.
//
// TestPackageGraph checks each package's kbuild imports against a table
// (an allowance nothing uses fails too); TestTransitiveDeps checks, as
// go-containerregistry's internal/depcheck does, the whole dependency tree
// of the leaf packages, so that no import chain pulls Helm, Kubernetes or
// Trivy under index, recipe, sbom or site. Both read the graph from
// go list -deps, which sees what the build sees (build tags included).
package depcheck
