package index

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// appendSpecJSON appends the compact encoding/json form of s to b, byte for
// byte what json.Marshal writes for kubepkg's types (TestSpecJSONMatchesEncodingJSON,
// TestKubepkgDigestVectors), with each field's omitempty taken from
// SpecFields; several
// times faster: digests of 100,000 specs are computed on every publish and
// every verification.
func appendSpecJSON(b []byte, s *PackageSpec) []byte {
	return appendSpecJSONOf(b, s, false)
}

// appendSpecJSONOf is appendSpecJSON; with omitAll every empty field is
// left out, as kbuild encoded specs before it followed kubepkg's types.
func appendSpecJSONOf(b []byte, s *PackageSpec, omitAll bool) []byte {
	o := jsonObj{b: b, omitAll: omitAll}
	o.open()
	o.str(fSpecVersion, s.Version)
	o.int(fSpecBuild, s.Build)
	if r := s.SourceRef; r != nil {
		o.key(fSpecSourceRef)
		o.open()
		o.str(fRefKind, r.Kind)
		o.str(fRefName, r.Name)
		o.str(fRefNamespace, r.Namespace)
		o.str(fRefURL, r.URL)
		o.str(fRefPath, r.Path)
		o.close()
	}
	o.strs(fSpecProvides, s.Provides)
	o.strs(fSpecConflicts, s.Conflicts)
	o.strs(fSpecCRDs, s.CRDs)
	if p := s.Permissions; p != nil {
		o.key(fSpecPermissions)
		o.open()
		o.bool(fPermClusterWide, p.ClusterWide)
		if len(p.Rules) > 0 {
			o.key(fPermRules)
			o.list(len(p.Rules), func(i int) {
				r := &p.Rules[i]
				o.open()
				o.strs(fRuleVerbs, r.Verbs)
				o.strs(fRuleAPIGroups, r.APIGroups)
				o.strs(fRuleResources, r.Resources)
				o.strs(fRuleResourceNames, r.ResourceNames)
				o.strs(fRuleNonResourceURLs, r.NonResourceURLs)
				o.close()
			})
		}
		o.close()
	}
	if r := s.Rollback; r != nil {
		o.key(fSpecRollback)
		o.open()
		o.bool(fRollbackSafe, r.Safe)
		o.close()
	}
	if len(s.Variants) > 0 {
		o.key(fSpecVariants)
		o.list(len(s.Variants), func(i int) { o.variant(&s.Variants[i]) })
	}
	o.strs(fSpecImages, s.Images)
	o.close()
	return o.b
}

func (o *jsonObj) variant(v *Variant) {
	o.open()
	o.str(fVariantName, v.Name)
	o.strs(fVariantDependsOn, v.DependsOn)
	if len(v.Requires) > 0 {
		o.key(fVariantRequires)
		o.list(len(v.Requires), func(i int) {
			r := &v.Requires[i]
			o.open()
			o.str(fReqPackage, r.Package)
			o.str(fReqCapability, r.Capability)
			o.str(fReqVersion, r.Version)
			o.bool(fReqOptional, r.Optional)
			o.close()
		})
	}
	if len(v.Libraries) > 0 {
		o.key(fVariantLibraries)
		o.list(len(v.Libraries), func(i int) {
			l := &v.Libraries[i]
			o.open()
			o.str(fLibName, l.Name)
			o.str(fLibPath, l.Path)
			o.close()
		})
	}
	if len(v.Components) > 0 {
		o.key(fVariantComponents)
		o.list(len(v.Components), func(i int) { o.component(&v.Components[i]) })
	}
	o.close()
}

func (o *jsonObj) component(c *Component) {
	o.open()
	o.str(fCompName, c.Name)
	o.str(fCompPath, c.Path)
	if ch := c.Chart; ch != nil {
		o.key(fCompChart)
		o.open()
		o.str(fChartRepository, ch.Repository)
		o.str(fChartName, ch.Name)
		o.str(fChartVersion, ch.Version)
		o.str(fChartDigest, ch.Digest)
		o.close()
	}
	if in := c.Install; in != nil {
		o.key(fCompInstall)
		o.open()
		o.str(fInstReleaseName, in.ReleaseName)
		o.str(fInstNamespace, in.Namespace)
		o.bool(fInstPrivileged, in.Privileged)
		o.strs(fInstDependsOn, in.DependsOn)
		o.str(fInstUpgradeCRDs, in.UpgradeCRDs)
		o.str(fInstWaitStrategy, in.WaitStrategy)
		if len(in.HealthCheckExprs) > 0 {
			o.key(fInstHealthCheckExprs)
			o.list(len(in.HealthCheckExprs), func(i int) {
				h := &in.HealthCheckExprs[i]
				o.open()
				o.str(fCheckAPIVersion, h.APIVersion)
				o.str(fCheckKind, h.Kind)
				o.str(fCheckCurrent, h.Current)
				o.str(fCheckInProgress, h.InProgress)
				o.str(fCheckFailed, h.Failed)
				o.close()
			})
		}
		o.str(fInstPhase, in.Phase)
		if len(in.ReadyWhen) > 0 {
			o.key(fInstReadyWhen)
			o.list(len(in.ReadyWhen), func(i int) {
				r := &in.ReadyWhen[i]
				o.open()
				o.str(fReadyAPIVersion, r.APIVersion)
				o.str(fReadyKind, r.Kind)
				o.str(fReadyName, r.Name)
				o.str(fReadyNamespace, r.Namespace)
				o.str(fReadyCondition, r.Condition)
				o.str(fReadyStatus, r.Status)
				o.close()
			})
		}
		o.close()
	}
	o.strs(fCompLibraries, c.Libraries)
	o.strs(fCompValuesFiles, c.ValuesFiles)
	o.close()
}

// jsonObj appends JSON objects with omitempty fields.
type jsonObj struct {
	b       []byte
	first   bool // no field written yet in the current object
	omitAll bool // leave out every empty field (appendSpecJSONOf)
}

// omit reports whether field f is left out when empty.
func (o *jsonObj) omit(f specField) bool { return o.omitAll || f.omitEmpty() }

func (o *jsonObj) open() {
	o.b = append(o.b, '{')
	o.first = true
}

func (o *jsonObj) close() {
	o.b = append(o.b, '}')
	o.first = false
}

func (o *jsonObj) key(f specField) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = append(o.b, '"')
	o.b = append(o.b, f.name()...)
	o.b = append(o.b, '"', ':')
}

// str writes a string field, leaving it out when empty only if SpecFields
// says kubepkg tags it omitempty; so do int, bool and strs.
func (o *jsonObj) str(f specField, v string) {
	if v != "" || !o.omit(f) {
		o.key(f)
		o.b = appendJSONString(o.b, v)
	}
}

func (o *jsonObj) int(f specField, v int) {
	if v != 0 || !o.omit(f) {
		o.key(f)
		o.b = strconv.AppendInt(o.b, int64(v), 10)
	}
}

func (o *jsonObj) bool(f specField, v bool) {
	if v || !o.omit(f) {
		o.key(f)
		o.b = strconv.AppendBool(o.b, v)
	}
}

// strs writes a list of strings; a nil list of a field without omitempty
// is null, an empty one [], as encoding/json writes them.
func (o *jsonObj) strs(f specField, v []string) {
	if len(v) == 0 && o.omit(f) {
		return
	}
	o.key(f)
	if v == nil {
		o.b = append(o.b, "null"...)
		return
	}
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

// digestMismatchReason says why a spec may not match its digest: the
// digest is what kbuild computed before its encoder followed kubepkg's
// types (every empty field left out), which every kubepkg subscriber
// refuses too, or else the spec was changed after it was published.
func digestMismatchReason(s *PackageSpec, digest string) string {
	if sha256Digest(appendSpecJSONOf(nil, s, true)) != digest {
		return "the spec was changed after it was published"
	}
	empty := RequiredEmpty(s)
	field := "a field kubepkg writes even when empty"
	if len(empty) > 0 {
		field = "spec." + empty[0].Path
	}
	return fmt.Sprintf("the entry's digest leaves out the empty %s, as kbuild computed digests before it followed kubepkg's types, so kubepkg subscribers refuse this version too; publish the fixed recipe under a new build number", field)
}
