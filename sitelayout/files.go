// Package sitelayout names the files of a published site, local or
// remote, relative to its root: the signed index and its signature, the
// root of trust and its versions, the public keys, the signatures by hash,
// and each version's SBOM, provenance, BuildInfo and evidence. Every
// package that reads or writes a site (publish, suite, site, bundle,
// siteread) spells a file's name through it, never as a string.
package sitelayout

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"kbuild.dev/kbuild/internal/dist"
)

// Files of a site, relative to its root (slash-separated).
const (
	// IndexFile is the signed index subscribers fetch.
	IndexFile = "index.yaml"
	// SignatureFile holds the signatures of IndexFile's exact bytes.
	SignatureFile = IndexFile + ".sig"
	// RootFile is the newest root of trust; RootDir holds every version.
	RootFile = "root.yaml"
	RootDir  = "root"
	// KeysDir holds the public keys that sign the index.
	KeysDir = "keys"
	// ByHashRoot is the top directory of the signatures by hash.
	ByHashRoot = "by-hash"
	// ByHashDir holds the signature of every index published, named by
	// the index's sha256: <hex>.sig.
	ByHashDir = ByHashRoot + "/sha256"
	// SBOMDir, ProvenanceDir and BuildDir hold each version's SBOM,
	// provenance and BuildInfo (SBOMFile, ProvenanceFile, BuildInfoFile).
	SBOMDir       = "sbom"
	ProvenanceDir = "provenance"
	BuildDir      = "build"
	// ScanFile is the vulnerability report given with --scan-report.
	ScanFile = "scan.json"
	// RepositoryBOMFile is the SBOM of the whole repository.
	RepositoryBOMFile = "sbom.cdx.json"
)

// SBOMFile is the CycloneDX SBOM of one version.
func SBOMFile(name, version string, build int) string {
	return SBOMDir + "/" + dist.Key(name, version, build) + ".cdx.json"
}

// ProvenanceFile is the signed build provenance of one version.
func ProvenanceFile(name, version string, build int) string {
	return ProvenanceDir + "/" + dist.Key(name, version, build) + ".intoto.json"
}

// BuildInfoFile is the BuildInfo of one version.
func BuildInfoFile(name, version string, build int) string {
	return BuildDir + "/" + dist.Key(name, version, build) + ".build.yaml"
}

// RootVersionFile is version n of the root of trust.
func RootVersionFile(n int) string { return fmt.Sprintf("%s/%d.yaml", RootDir, n) }

// KeyFile is the public key of keyid.
func KeyFile(keyid string) string { return KeysDir + "/" + keyid + ".pub" }

// SingleKeyFile is the public key when one key signs the index.
const SingleKeyFile = KeysDir + "/index.pub"

// KeylessFile names, when the charts are also signed keylessly, the
// identity their certificates are issued for ({"issuer": …, "subject":
// …}), which the catalog tells Flux and cosign users to pin.
const KeylessFile = KeysDir + "/keyless.json"

// ByHashSignatureFile is the signature file of the index whose bytes are
// data: by-hash/sha256/<hex of its sha256>.sig.
func ByHashSignatureFile(data []byte) string {
	sum := sha256.Sum256(data)
	return ByHashSignatureOf(hex.EncodeToString(sum[:]))
}

// ByHashSignatureOf is ByHashSignatureFile of the data whose sha256 is
// hexDigest.
func ByHashSignatureOf(hexDigest string) string { return ByHashDir + "/" + hexDigest + ".sig" }

// EvidenceDir holds signed test evidence, shared by every suite of a
// site: EvidenceDir/<name>-<version>-<build>/<environment>.intoto.json.
const EvidenceDir = "evidence"

// EvidenceFile is the evidence of one version in one environment, env
// being its "key=value,…" form (keys sorted).
func EvidenceFile(name, version string, build int, env string) string {
	return EvidenceDir + "/" + dist.Key(name, version, build) + "/" + env + ".intoto.json"
}
