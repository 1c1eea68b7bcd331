// Package index defines the kubepkg.dev repository formats that kbuild
// publishes and subscribers verify: the PackageSource spec and its digest,
// the RepositoryIndex, index signatures, ed25519 keys and the TUF-style root
// of trust.
//
// The package is a leaf: it imports nothing else of kbuild but
// internal/yamlscan (the format-independent YAML reader and writer), does no
// network or file I/O and never reads key files. Callers pass bytes, signers and
// reference times in; see ../shared/spec/index.md for the contract.
//
// What is where:
//   - keys.go: ed25519 keys (PEM PKCS #8 / PKIX), keyids, Signer and
//     Verifier.
//   - sign.go: index.yaml.sig in its two forms, signature thresholds, and
//     the version statements delegated keys sign.
//   - repoindex.go, builder.go, merge.go: the RepositoryIndex, building it
//     from build records (Builder; Compact for 100,000 versions) and
//     publishing over a verified base (Builder.AddBase, Merge).
//   - root.go: roots of trust (new, next, sign, canonical signed bytes).
//   - verify.go, errors.go: what a subscriber checks, in its order, and
//     *VerificationError for refusals.
//   - fields.go: SpecFields, the one table of how kubepkg's API types encode
//     each spec field (JSON name, omitempty), and RequiredEmpty.
//   - lenient.go: reading indexes as kubepkg's client does (unknown
//     fields ignored, versions with unknown spec fields left out).
//   - relocate.go: moving a base index's charts to another registry path.
//   - yamlread.go, specread.go, yamlwrite.go, yamlslow.go: the typed
//     decoders and encoders of this package's types over internal/yamlscan,
//     which reads and writes the block YAML that sigs.k8s.io/yaml writes,
//     byte for byte equal to sigs.k8s.io/yaml on what it handles and tested
//     against it (yaml_test.go, fuzz_test.go); anything else goes through
//     sigs.k8s.io/yaml (yamlslow.go, lenient.go), which refuses anchors and
//     aliases. Field names and omitempty come from SpecFields. A panic while
//     reading or writing is an error (yamlscan.PanicError), not a crash.
//   - specjson.go: the canonical JSON encoder of specs (the digest), byte
//     for byte equal to encoding/json.
package index
