package publish

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
	// ByHashDir holds the signature of every index published, named by
	// the index's sha256: <hex>.sig.
	ByHashDir = "by-hash/sha256"
	// ScanFile is the vulnerability report given with --scan-report.
	ScanFile = "scan.json"
	// RepositoryBOMFile is the SBOM of the whole repository.
	RepositoryBOMFile = "sbom.cdx.json"
)

// SBOMFile is the CycloneDX SBOM of one version.
func SBOMFile(name, version string, build int) string {
	return "sbom/" + dist.Key(name, version, build) + ".cdx.json"
}

// ProvenanceFile is the signed build provenance of one version.
func ProvenanceFile(name, version string, build int) string {
	return "provenance/" + dist.Key(name, version, build) + ".intoto.json"
}

// BuildInfoFile is the BuildInfo of one version.
func BuildInfoFile(name, version string, build int) string {
	return "build/" + dist.Key(name, version, build) + ".build.yaml"
}

// RootVersionFile is version n of the root of trust.
func RootVersionFile(n int) string { return fmt.Sprintf("%s/%d.yaml", RootDir, n) }

// KeyFile is the public key of keyid.
func KeyFile(keyid string) string { return KeysDir + "/" + keyid + ".pub" }

// SingleKeyFile is the public key when one key signs the index.
const SingleKeyFile = KeysDir + "/index.pub"

// ByHashSignatureFile is the signature file of the index whose bytes are
// data: by-hash/sha256/<hex of its sha256>.sig.
func ByHashSignatureFile(data []byte) string { return byHashSignatureOf(hexDigest(data)) }

// byHashSignatureOf is ByHashSignatureFile of the data whose sha256 is hex.
func byHashSignatureOf(hex string) string { return ByHashDir + "/" + hex + ".sig" }

func hexDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// EvidenceDir holds signed test evidence, shared by every suite of a
// site: EvidenceDir/<name>-<version>-<build>/<environment>.intoto.json.
const EvidenceDir = "evidence"

// EvidenceFile is the evidence of one version in one environment, env
// being its "key=value,…" form (keys sorted).
func EvidenceFile(name, version string, build int, env string) string {
	return EvidenceDir + "/" + dist.Key(name, version, build) + "/" + env + ".intoto.json"
}
