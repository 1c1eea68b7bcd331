package index

import (
	"strconv"
	"unicode/utf8"
)

// appendSpecJSON appends the compact encoding/json form of s to b, byte for
// byte what json.Marshal writes (TestSpecJSONMatchesEncodingJSON), several
// times faster: digests of 100,000 specs are computed on every publish and
// every verification.
func appendSpecJSON(b []byte, s *PackageSpec) []byte {
	o := jsonObj{b: b}
	o.open()
	o.str("version", s.Version)
	o.int("build", s.Build)
	if r := s.SourceRef; r != nil {
		o.key("sourceRef")
		o.open()
		o.str("kind", r.Kind)
		o.str("name", r.Name)
		o.str("namespace", r.Namespace)
		o.str("url", r.URL)
		o.str("path", r.Path)
		o.close()
	}
	o.strs("provides", s.Provides)
	o.strs("conflicts", s.Conflicts)
	o.strs("crds", s.CRDs)
	if p := s.Permissions; p != nil {
		o.key("permissions")
		o.open()
		o.bool("clusterWide", p.ClusterWide)
		if len(p.Rules) > 0 {
			o.key("rules")
			o.list(len(p.Rules), func(i int) {
				r := &p.Rules[i]
				o.open()
				o.strs("verbs", r.Verbs)
				o.strs("apiGroups", r.APIGroups)
				o.strs("resources", r.Resources)
				o.strs("resourceNames", r.ResourceNames)
				o.strs("nonResourceURLs", r.NonResourceURLs)
				o.close()
			})
		}
		o.close()
	}
	if r := s.Rollback; r != nil {
		o.key("rollback")
		o.open()
		o.bool("safe", r.Safe)
		o.close()
	}
	if len(s.Variants) > 0 {
		o.key("variants")
		o.list(len(s.Variants), func(i int) { o.variant(&s.Variants[i]) })
	}
	o.strs("images", s.Images)
	o.close()
	return o.b
}

func (o *jsonObj) variant(v *Variant) {
	o.open()
	o.str("name", v.Name)
	o.strs("dependsOn", v.DependsOn)
	if len(v.Requires) > 0 {
		o.key("requires")
		o.list(len(v.Requires), func(i int) {
			r := &v.Requires[i]
			o.open()
			o.str("package", r.Package)
			o.str("capability", r.Capability)
			o.str("version", r.Version)
			o.bool("optional", r.Optional)
			o.close()
		})
	}
	if len(v.Libraries) > 0 {
		o.key("libraries")
		o.list(len(v.Libraries), func(i int) {
			l := &v.Libraries[i]
			o.open()
			o.str("name", l.Name)
			o.str("path", l.Path)
			o.close()
		})
	}
	if len(v.Components) > 0 {
		o.key("components")
		o.list(len(v.Components), func(i int) { o.component(&v.Components[i]) })
	}
	o.close()
}

func (o *jsonObj) component(c *Component) {
	o.open()
	o.str("name", c.Name)
	o.str("path", c.Path)
	if ch := c.Chart; ch != nil {
		o.key("chart")
		o.open()
		o.str("repository", ch.Repository)
		o.str("name", ch.Name)
		o.str("version", ch.Version)
		o.str("digest", ch.Digest)
		o.close()
	}
	if in := c.Install; in != nil {
		o.key("install")
		o.open()
		o.str("releaseName", in.ReleaseName)
		o.str("namespace", in.Namespace)
		o.bool("privileged", in.Privileged)
		o.strs("dependsOn", in.DependsOn)
		o.str("upgradeCRDs", in.UpgradeCRDs)
		o.str("waitStrategy", in.WaitStrategy)
		if len(in.HealthCheckExprs) > 0 {
			o.key("healthCheckExprs")
			o.list(len(in.HealthCheckExprs), func(i int) {
				h := &in.HealthCheckExprs[i]
				o.open()
				o.str("apiVersion", h.APIVersion)
				o.str("kind", h.Kind)
				o.str("current", h.Current)
				o.str("inProgress", h.InProgress)
				o.str("failed", h.Failed)
				o.close()
			})
		}
		o.str("phase", in.Phase)
		if len(in.ReadyWhen) > 0 {
			o.key("readyWhen")
			o.list(len(in.ReadyWhen), func(i int) {
				r := &in.ReadyWhen[i]
				o.open()
				o.str("apiVersion", r.APIVersion)
				o.str("kind", r.Kind)
				o.str("name", r.Name)
				o.str("namespace", r.Namespace)
				o.str("condition", r.Condition)
				o.str("status", r.Status)
				o.close()
			})
		}
		o.close()
	}
	o.strs("libraries", c.Libraries)
	o.strs("valuesFiles", c.ValuesFiles)
	o.close()
}

// jsonObj appends JSON objects with omitempty fields.
type jsonObj struct {
	b     []byte
	first bool // no field written yet in the current object
}

func (o *jsonObj) open() {
	o.b = append(o.b, '{')
	o.first = true
}

func (o *jsonObj) close() {
	o.b = append(o.b, '}')
	o.first = false
}

func (o *jsonObj) key(k string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

func (o *jsonObj) str(k, v string) {
	if v != "" {
		o.key(k)
		o.b = appendJSONString(o.b, v)
	}
}

func (o *jsonObj) int(k string, v int) {
	if v != 0 {
		o.key(k)
		o.b = strconv.AppendInt(o.b, int64(v), 10)
	}
}

func (o *jsonObj) bool(k string, v bool) {
	if v {
		o.key(k)
		o.b = append(o.b, "true"...)
	}
}

func (o *jsonObj) strs(k string, v []string) {
	if len(v) == 0 {
		return
	}
	o.key(k)
	o.b = append(o.b, '[')
	for i, s := range v {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = appendJSONString(o.b, s)
	}
	o.b = append(o.b, ']')
}

func (o *jsonObj) list(n int, item func(i int)) {
	o.b = append(o.b, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		item(i)
	}
	o.b = append(o.b, ']')
}

// jsonPlain marks the ASCII bytes encoding/json copies as they are (with
// HTML escaping on): printable, not '"', '\\', '<', '>' or '&'.
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// jsonSafe reports whether every byte of s is one encoding/json copies as
// it is, eight bytes at a time.
func jsonSafe(s string) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	hasByte := func(v, c uint64) uint64 { x := v ^ c*ones; return (x - ones) & ^x & highs }
	i := 0
	for ; i+8 <= len(s); i += 8 {
		v := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		bad := v&highs | (v-0x20*ones)&^v&highs | hasByte(v, '"') | hasByte(v, '\\') | hasByte(v, '<') | hasByte(v, '>') | hasByte(v, '&')
		if bad != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || !jsonPlain[c] {
			return false
		}
	}
	return true
}

// appendJSONString appends s as encoding/json writes a string: quoted,
// '"' and '\\' escaped, control characters as \b \f \n \r \t or \u00XX,
// <, > and & as \u003c \u003e \u0026, invalid UTF-8 as \ufffd, and U+2028
// and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	if jsonSafe(s) {
		b = append(b, s...)
		return append(b, '"')
	}
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonPlain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += n
			continue
		}
		i += n
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
