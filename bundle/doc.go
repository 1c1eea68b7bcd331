// Package bundle makes, reads and imports air-gap bundles: one file, an OCI
// image layout in a tar, holding a signed repository index (with its
// signature and root chain), every chart and every image that a chosen set
// of package versions pins, and their SBOMs and provenance.
//
// Create verifies the index as a subscriber does, resolves the packages and
// what they require, and streams every blob from its registry into the tar
// while hashing it, so images of gigabytes need constant memory. The same
// inputs give the same bytes: the bundle's time is SOURCE_DATE_EPOCH (or
// the index's generated time) and everything is written in sorted order.
//
// Import trusts only the keys it is given, never the bundle: it verifies
// the index, then every blob against the digests the signed index pins,
// and pushes nothing until all of that passed. Inspect reads a bundle
// without keys and says what it holds.
//
// The layout of a bundle: index.json names one OCI image index (artifact
// type ArtifactType); its first manifest is the metadata "image" whose
// config is an OCI image config carrying the bundle's labels and whose
// layers are index.yaml, index.yaml.sig, root files, bundle.json (Contents)
// and the SBOM and provenance files; the other manifests are the charts'
// manifests and the images' manifests or indexes, each annotated with
// AnnotationKind and AnnotationRef.
package bundle
