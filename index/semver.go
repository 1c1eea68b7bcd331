package index

import (
	"fmt"
	"strings"
)

// semver is a parsed exact semantic version (semver.org 2.0.0).
type semver struct {
	major, minor, patch uint64
	pre                 []string // dot-separated pre-release identifiers
	build               string   // build metadata, ignored by precedence
}

// parseSemver parses an exact version such as 1.9.0 or 1.10.0-rc.1+meta:
// no leading "v", no leading zeros, three numbers.
func parseSemver(s string) (semver, error) {
	var v semver
	bad := func(why string) (semver, error) {
		return semver{}, fmt.Errorf("version %q is not an exact semantic version (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]): %s", s, why)
	}
	rest := s
	if i := strings.IndexByte(rest, '+'); i >= 0 {
		v.build = rest[i+1:]
		rest = rest[:i]
		if !validIdents(v.build, false) {
			return bad("bad build metadata")
		}
	}
	if i := strings.IndexByte(rest, '-'); i >= 0 {
		pre := rest[i+1:]
		rest = rest[:i]
		if !validIdents(pre, true) {
			return bad("bad pre-release")
		}
		v.pre = strings.Split(pre, ".")
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return bad("want three numbers")
	}
	nums := []*uint64{&v.major, &v.minor, &v.patch}
	for i, p := range parts {
		n, ok := numericIdent(p)
		if !ok {
			return bad(fmt.Sprintf("%q is not a number without leading zeros", p))
		}
		*nums[i] = n
	}
	return v, nil
}

// numericIdent parses a number without leading zeros.
func numericIdent(p string) (uint64, bool) {
	if p == "" || len(p) > 1 && p[0] == '0' || len(p) > 18 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return 0, false
		}
		n = n*10 + uint64(p[i]-'0')
	}
	return n, true
}

// validIdents checks dot-separated identifiers of [0-9A-Za-z-]; in a
// pre-release, numeric identifiers have no leading zeros.
func validIdents(s string, pre bool) bool {
	if s == "" {
		return false
	}
	for _, id := range strings.Split(s, ".") {
		if id == "" {
			return false
		}
		digits := true
		for i := 0; i < len(id); i++ {
			c := id[i]
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-':
				digits = false
			default:
				return false
			}
		}
		if pre && digits && len(id) > 1 && id[0] == '0' {
			return false
		}
	}
	return true
}

// compare returns -1, 0 or +1 by semver precedence.
func (a semver) compare(b semver) int {
	for _, p := range [][2]uint64{{a.major, b.major}, {a.minor, b.minor}, {a.patch, b.patch}} {
		if p[0] != p[1] {
			if p[0] < p[1] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a.pre) == 0 && len(b.pre) == 0:
		return 0
	case len(a.pre) == 0:
		return 1
	case len(b.pre) == 0:
		return -1
	}
	for i := 0; i < len(a.pre) && i < len(b.pre); i++ {
		x, y := a.pre[i], b.pre[i]
		if x == y {
			continue
		}
		xn, xok := numericIdent(x)
		yn, yok := numericIdent(y)
		switch {
		case xok && yok:
			if xn < yn {
				return -1
			}
			return 1
		case xok:
			return -1
		case yok:
			return 1
		case x < y:
			return -1
		default:
			return 1
		}
	}
	switch {
	case len(a.pre) < len(b.pre):
		return -1
	case len(a.pre) > len(b.pre):
		return 1
	}
	return 0
}
