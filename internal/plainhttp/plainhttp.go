// Package plainhttp decides which OCI registries kbuild may reach over
// plain HTTP: registries on loopback when the user asks for it (a test or
// local registry), and the hosts the user names, never any other; a public
// registry answering over plain HTTP would otherwise be trusted for pins.
package plainhttp

import (
	"net"
	"slices"
)

// Policy says which registries may be reached over plain HTTP. The zero
// value allows none.
type Policy struct {
	// Loopback allows registries on localhost, 127.0.0.0/8 and ::1.
	Loopback bool
	// Hosts are further registries allowed, as HOST or HOST:PORT exactly as
	// written in references.
	Hosts []string
}

// Allows reports whether registry (HOST or HOST:PORT) may be reached over
// plain HTTP.
func (p Policy) Allows(registry string) bool {
	if slices.Contains(p.Hosts, registry) {
		return true
	}
	if !p.Loopback {
		return false
	}
	host := registry
	if h, _, err := net.SplitHostPort(registry); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
