// Package spec defines the PackageSource: the kubepkg.dev record of one
// built package version, its spec and the spec's digest. It is the leaf
// of kbuild's formats: the recipe model, the fetchers, the SBOM writer and
// the site import it, and it imports nothing else of kbuild.
//
// What is where:
//   - spec.go: the spec types, field for field kubepkg's api/v1 types, and
//     Digest, the sha256 of the spec's canonical JSON.
//   - specjson.go: the canonical JSON encoder, byte for byte what
//     kubepkg's encoding/json writes for its types (golden vectors in
//     ../index/testdata/kubepkg-digests.yaml).
//   - fields.go: SpecFields, the one table of how kubepkg's types encode
//     each field (JSON name, omitempty), which the digest encoder and the
//     index's YAML writer both read, and RequiredEmpty.
//   - record.go: the PackageSource record, the build info and the sources
//     and charts it names.
//   - version.go: the exact semver of a version (Masterminds semver), and
//     its order.
//   - digest.go, image.go: sha256 digests and image references, parsed by
//     go-containerregistry.
package spec
