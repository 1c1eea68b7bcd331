// Package builder turns recipes into charts: it fetches and verifies the
// sources (package sources), assembles each chart (package patches), packs
// it into a byte-reproducible archive, renders it with Helm's engine to check
// the images and CRDs the package declares, pushes it to an oci.Target (a remote
// registry or a local OCI layout) and writes the build record.
//
// Nothing is pushed or written until every chart of a recipe has been
// assembled, packed and checked, so bad input leaves no half-written output.
package builder
