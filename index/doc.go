// Package index reads, builds and writes the kubepkg.dev RepositoryIndex
// that kbuild publishes: the packages, versions and their specs
// (package spec), the release sets and the withdrawn versions, and the
// signature file's form. Whether an index may be believed is package
// trust's question, which reads indexes through this package.
//
// The package does no network or file I/O. Callers pass bytes in.
//
// What is where:
//   - repoindex.go, builder.go: the RepositoryIndex, building it from
//     build records (Builder; Compact for 100,000 versions) over a
//     published base (AddPublished, AddPublishedPackage;
//     trust.AddBase and trust.AddVerifiedFunc call them after verifying).
//   - recordparse.go: build records (PackageSource documents).
//   - signatures.go: index.yaml.sig in its two forms.
//   - sets.go, withdrawn.go: release sets and tombstones.
//   - lenient.go: reading indexes as kubepkg's client does (unknown
//     fields ignored, versions with unknown spec fields left out).
//   - relocate.go: moving a base index's charts to another registry path.
//   - yamlread.go, yamlwrite.go, specread.go, yamlslow.go: the index's
//     fields read and written over internal/yamlscan, a reader and writer
//     of the block YAML that sigs.k8s.io/yaml writes (byte for byte equal
//     to it on what they handle and tested against it: yaml_test.go,
//     fuzz_test.go), with a recover in every goroutine; anything else goes
//     through sigs.k8s.io/yaml, which refuses anchors and aliases. Spec
//     field names come from spec.SpecFields, as the digest's do.
package index
