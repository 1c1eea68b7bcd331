// Package index defines the kubepkg.dev repository formats that kbuild
// publishes and subscribers verify: the PackageSource spec and its digest,
// the RepositoryIndex, index signatures, ed25519 keys and the TUF-style root
// of trust.
//
// The package is a leaf: it imports nothing else of kbuild, does no network
// I/O and never reads key files. Callers pass bytes, signers and reference
// times in; see ../shared/spec/index.md for the contract.
package index
