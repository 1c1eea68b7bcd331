package sbom

import (
	"sort"
	"strings"

	"github.com/google/uuid"
)

// SerialNamespace is the UUID namespace of kbuild BOM serial numbers. A
// BOM's serialNumber is "urn:uuid:" and the version 5 (SHA-1, RFC 9562)
// UUID of this namespace and the sorted spec digests of its packages, one
// per line, so the same packages always get the same serial number. It was
// chosen at random once and must never change.
const SerialNamespace = "6f1c2a9e-4b7d-4e35-9a0c-3d5b8e27f641"

// serialNamespace is SerialNamespace parsed.
var serialNamespace = uuid.MustParse(SerialNamespace)

// serialNumber returns the BOM serial number for a set of spec digests.
func serialNumber(digests []string) string {
	d := append([]string(nil), digests...)
	sort.Strings(d)
	return "urn:uuid:" + serialUUID(strings.Join(d, "\n"))
}

// serialUUID is the version 5 UUID of name in SerialNamespace.
func serialUUID(name string) string {
	return uuid.NewSHA1(serialNamespace, []byte(name)).String()
}
