package spec

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the compact encoding/json form of s to b, byte for
// byte what json.Marshal writes for kubepkg's types (TestSpecJSONMatchesEncodingJSON,
// TestKubepkgDigestVectors), with each field's omitempty taken from
// SpecFields; several
// times faster: digests of 100,000 specs are computed on every publish and
// every verification.
func AppendJSON(b []byte, s *PackageSpec) []byte {
	return AppendJSONOf(b, s, false)
}

// AppendJSONOf is AppendJSON; with omitAll every empty field is
// left out, as kbuild encoded specs before it followed kubepkg's types.
func AppendJSONOf(b []byte, s *PackageSpec, omitAll bool) []byte {
	o := jsonObj{b: b, omitAll: omitAll}
	o.open()
	o.str(FieldSpecVersion, s.Version)
	o.int(FieldSpecBuild, s.Build)
	if r := s.SourceRef; r != nil {
		o.key(FieldSpecSourceRef)
		o.open()
		o.str(FieldRefKind, r.Kind)
		o.str(FieldRefName, r.Name)
		o.str(FieldRefNamespace, r.Namespace)
		o.str(FieldRefURL, r.URL)
		o.str(FieldRefPath, r.Path)
		o.close()
	}
	o.strs(FieldSpecProvides, s.Provides)
	o.strs(FieldSpecConflicts, s.Conflicts)
	o.strs(FieldSpecCRDs, s.CRDs)
	if p := s.Permissions; p != nil {
		o.key(FieldSpecPermissions)
		o.open()
		o.bool(FieldPermClusterWide, p.ClusterWide)
		if len(p.Rules) > 0 {
			o.key(FieldPermRules)
			o.list(len(p.Rules), func(i int) {
				r := &p.Rules[i]
				o.open()
				o.strs(FieldRuleVerbs, r.Verbs)
				o.strs(FieldRuleAPIGroups, r.APIGroups)
				o.strs(FieldRuleResources, r.Resources)
				o.strs(FieldRuleResourceNames, r.ResourceNames)
				o.strs(FieldRuleNonResourceURLs, r.NonResourceURLs)
				o.close()
			})
		}
		o.close()
	}
	if r := s.Rollback; r != nil {
		o.key(FieldSpecRollback)
		o.open()
		o.bool(FieldRollbackSafe, r.Safe)
		o.close()
	}
	if len(s.Variants) > 0 {
		o.key(FieldSpecVariants)
		o.list(len(s.Variants), func(i int) { o.variant(&s.Variants[i]) })
	}
	o.strs(FieldSpecImages, s.Images)
	o.close()
	return o.b
}

func (o *jsonObj) variant(v *Variant) {
	o.open()
	o.str(FieldVariantName, v.Name)
	o.strs(FieldVariantDependsOn, v.DependsOn)
	if len(v.Requires) > 0 {
		o.key(FieldVariantRequires)
		o.list(len(v.Requires), func(i int) {
			r := &v.Requires[i]
			o.open()
			o.str(FieldReqPackage, r.Package)
			o.str(FieldReqCapability, r.Capability)
			o.str(FieldReqVersion, r.Version)
			o.bool(FieldReqOptional, r.Optional)
			o.close()
		})
	}
	if len(v.Libraries) > 0 {
		o.key(FieldVariantLibraries)
		o.list(len(v.Libraries), func(i int) {
			l := &v.Libraries[i]
			o.open()
			o.str(FieldLibName, l.Name)
			o.str(FieldLibPath, l.Path)
			o.close()
		})
	}
	if len(v.Components) > 0 {
		o.key(FieldVariantComponents)
		o.list(len(v.Components), func(i int) { o.component(&v.Components[i]) })
	}
	o.close()
}

func (o *jsonObj) component(c *Component) {
	o.open()
	o.str(FieldCompName, c.Name)
	o.str(FieldCompPath, c.Path)
	if ch := c.Chart; ch != nil {
		o.key(FieldCompChart)
		o.open()
		o.str(FieldChartRepository, ch.Repository)
		o.str(FieldChartName, ch.Name)
		o.str(FieldChartVersion, ch.Version)
		o.str(FieldChartDigest, ch.Digest)
		o.close()
	}
	if in := c.Install; in != nil {
		o.key(FieldCompInstall)
		o.open()
		o.str(FieldInstReleaseName, in.ReleaseName)
		o.str(FieldInstNamespace, in.Namespace)
		o.bool(FieldInstPrivileged, in.Privileged)
		o.strs(FieldInstDependsOn, in.DependsOn)
		o.str(FieldInstUpgradeCRDs, in.UpgradeCRDs)
		o.str(FieldInstWaitStrategy, in.WaitStrategy)
		if len(in.HealthCheckExprs) > 0 {
			o.key(FieldInstHealthCheckExprs)
			o.list(len(in.HealthCheckExprs), func(i int) {
				h := &in.HealthCheckExprs[i]
				o.open()
				o.str(FieldCheckAPIVersion, h.APIVersion)
				o.str(FieldCheckKind, h.Kind)
				o.str(FieldCheckCurrent, h.Current)
				o.str(FieldCheckInProgress, h.InProgress)
				o.str(FieldCheckFailed, h.Failed)
				o.close()
			})
		}
		o.str(FieldInstPhase, in.Phase)
		if len(in.ReadyWhen) > 0 {
			o.key(FieldInstReadyWhen)
			o.list(len(in.ReadyWhen), func(i int) {
				r := &in.ReadyWhen[i]
				o.open()
				o.str(FieldReadyAPIVersion, r.APIVersion)
				o.str(FieldReadyKind, r.Kind)
				o.str(FieldReadyName, r.Name)
				o.str(FieldReadyNamespace, r.Namespace)
				o.str(FieldReadyCondition, r.Condition)
				o.str(FieldReadyStatus, r.Status)
				o.close()
			})
		}
		o.close()
	}
	o.strs(FieldCompLibraries, c.Libraries)
	o.strs(FieldCompValuesFiles, c.ValuesFiles)
	o.close()
}

// jsonObj appends JSON objects with omitempty fields.
type jsonObj struct {
	b       []byte
	first   bool // no field written yet in the current object
	omitAll bool // leave out every empty field (appendSpecJSONOf)
}

// omit reports whether field f is left out when empty.
func (o *jsonObj) omit(f Field) bool { return o.omitAll || f.OmitEmpty() }

func (o *jsonObj) open() {
	o.b = append(o.b, '{')
	o.first = true
}

func (o *jsonObj) close() {
	o.b = append(o.b, '}')
	o.first = false
}

func (o *jsonObj) key(f Field) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = append(o.b, '"')
	o.b = append(o.b, f.Name()...)
	o.b = append(o.b, '"', ':')
}

// str writes a string field, leaving it out when empty only if SpecFields
// says kubepkg tags it omitempty; so do int, bool and strs.
func (o *jsonObj) str(f Field, v string) {
	if v != "" || !o.omit(f) {
		o.key(f)
		o.b = appendJSONString(o.b, v)
	}
}

func (o *jsonObj) int(f Field, v int) {
	if v != 0 || !o.omit(f) {
		o.key(f)
		o.b = strconv.AppendInt(o.b, int64(v), 10)
	}
}

func (o *jsonObj) bool(f Field, v bool) {
	if v || !o.omit(f) {
		o.key(f)
		o.b = strconv.AppendBool(o.b, v)
	}
}

// strs writes a list of strings; a nil list of a field without omitempty
// is null, an empty one [], as encoding/json writes them.
func (o *jsonObj) strs(f Field, v []string) {
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

// DigestMismatchReason says why a spec may not match its digest: the
// digest is what kbuild computed before its encoder followed kubepkg's
// types (every empty field left out), which every kubepkg subscriber
// refuses too, or else the spec was changed after it was published.
func DigestMismatchReason(s *PackageSpec, digest string) string {
	if DigestOf(AppendJSONOf(nil, s, true)) != digest {
		return "the spec was changed after it was published"
	}
	empty := RequiredEmpty(s)
	field := "a field kubepkg writes even when empty"
	if len(empty) > 0 {
		field = "spec." + empty[0].Path
	}
	return fmt.Sprintf("the entry's digest leaves out the empty %s, as kbuild computed digests before it followed kubepkg's types, so kubepkg subscribers refuse this version too; publish the fixed recipe under a new build number", field)
}
