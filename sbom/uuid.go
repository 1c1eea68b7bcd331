package sbom

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// SerialNamespace is the UUID namespace of kbuild BOM serial numbers. A
// BOM's serialNumber is "urn:uuid:" and the version 5 (SHA-1, RFC 9562)
// UUID of this namespace and the sorted spec digests of its packages, one
// per line, so the same packages always get the same serial number. It was
// chosen at random once and must never change.
const SerialNamespace = "6f1c2a9e-4b7d-4e35-9a0c-3d5b8e27f641"

// serialNumber returns the BOM serial number for a set of spec digests.
func serialNumber(digests []string) string {
	d := append([]string(nil), digests...)
	sort.Strings(d)
	return "urn:uuid:" + uuidV5(SerialNamespace, strings.Join(d, "\n"))
}

// uuidV5 returns the name-based SHA-1 UUID of name in namespace ns.
func uuidV5(ns, name string) string {
	nsBytes, err := hex.DecodeString(strings.ReplaceAll(ns, "-", ""))
	if err != nil || len(nsBytes) != 16 {
		panic(fmt.Sprintf("sbom: invalid UUID namespace %q", ns))
	}
	h := sha1.New()
	h.Write(nsBytes)
	h.Write([]byte(name))
	u := h.Sum(nil)[:16]
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	x := hex.EncodeToString(u)
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}
