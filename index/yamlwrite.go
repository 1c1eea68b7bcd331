package index

import (
	"strconv"
	"strings"
)

// ywriter writes block YAML byte for byte as go.yaml.in/yaml/v2 (and so
// sigs.k8s.io/yaml) writes the same values: keys in yaml.v2 order, two-space
// indentation, sequences not indented under their key, the same choice of
// plain, single- or double-quoted style and the same folding of long
// strings at column 80.
//
// It only handles strings of printable ASCII on one line. On any other
// string it sets slow, and the caller writes that part with
// sigs.k8s.io/yaml instead (yaml_test.go compares both).
type ywriter struct {
	b         []byte
	lineStart int
	pend      pending
	slow      bool
}

// pending is what the last written indicator waits for.
type pending uint8

const (
	pendNone pending = iota // at the start of a line
	pendKey                 // after "key:"
	pendDash                // after "-"
)

const yamlWidth = 80 // yaml.v2's preferred line width

func (w *ywriter) col() int { return len(w.b) - w.lineStart }

func (w *ywriter) newline() {
	w.b = append(w.b, '\n')
	w.lineStart = len(w.b)
}

const spaces64 = "                                                                "

func (w *ywriter) pad(n int) {
	for c := w.col(); c < n; c = w.col() {
		w.b = append(w.b, spaces64[:min(n-c, len(spaces64))]...)
	}
}

// key starts the mapping entry k of a mapping at column col.
func (w *ywriter) key(col int, k string) {
	switch w.pend {
	case pendKey:
		w.newline()
		w.pad(col)
	case pendDash:
		w.b = append(w.b, ' ')
	default:
		w.pad(col)
	}
	if len(k) > 128 {
		w.slow = true
	}
	switch chooseStyle(k) {
	case stylePlain:
		w.b = append(w.b, k...)
	case styleSingle:
		w.b = append(w.b, '\'')
		w.b = appendSingle(w.b, k)
		w.b = append(w.b, '\'')
	case styleDouble:
		w.b = append(w.b, '"')
		w.b = appendDouble(w.b, k)
		w.b = append(w.b, '"')
	default:
		w.slow = true
	}
	w.b = append(w.b, ':')
	w.pend = pendKey
}

// item starts an entry of a sequence whose dashes are at column col.
func (w *ywriter) item(col int) {
	switch w.pend {
	case pendKey:
		w.newline()
		w.pad(col)
	case pendDash:
		w.b = append(w.b, ' ')
	default:
		w.pad(col)
	}
	w.b = append(w.b, '-')
	w.pend = pendDash
}

// empty ends a mapping or sequence value that had no entries.
func (w *ywriter) empty(flow string) {
	if w.pend != pendNone {
		w.b = append(w.b, ' ')
		w.b = append(w.b, flow...)
		w.newline()
		w.pend = pendNone
	}
}

func (w *ywriter) int(n int) {
	w.b = append(w.b, ' ')
	w.b = strconv.AppendInt(w.b, int64(n), 10)
	w.newline()
	w.pend = pendNone
}

func (w *ywriter) bool(v bool) {
	w.b = append(w.b, ' ')
	w.b = strconv.AppendBool(w.b, v)
	w.newline()
	w.pend = pendNone
}

// str writes the string value of the indicator at column ind; folded lines
// continue at ind+2.
func (w *ywriter) str(ind int, s string) {
	indent := ind + 2
	w.b = append(w.b, ' ')
	style := chooseStyle(s)
	// Without a space past the width, nothing folds; without quotes or
	// backslashes, nothing is escaped: copy the string whole.
	if w.col()+len(s) <= yamlWidth+1 || strings.IndexByte(s, ' ') < 0 {
		switch {
		case style == stylePlain:
			w.b = append(w.b, s...)
			w.newline()
			w.pend = pendNone
			return
		case style == styleSingle && strings.IndexByte(s, '\'') < 0:
			w.b = append(w.b, '\'')
			w.b = append(w.b, s...)
			w.b = append(w.b, '\'')
			w.newline()
			w.pend = pendNone
			return
		case style == styleDouble && !strings.ContainsAny(s, "\"\\"):
			w.b = append(w.b, '"')
			w.b = append(w.b, s...)
			w.b = append(w.b, '"')
			w.newline()
			w.pend = pendNone
			return
		}
	}
	switch style {
	case stylePlain:
		spaces := false
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c == ' ' {
				if !spaces && w.col() > yamlWidth && s[i+1] != ' ' {
					w.newline()
					w.pad(indent)
				} else {
					w.b = append(w.b, ' ')
				}
				spaces = true
				continue
			}
			w.b = append(w.b, c)
			spaces = false
		}
	case styleSingle:
		w.b = append(w.b, '\'')
		spaces := false
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c == ' ' {
				if !spaces && w.col() > yamlWidth && i > 0 && i < len(s)-1 && s[i+1] != ' ' {
					w.newline()
					w.pad(indent)
				} else {
					w.b = append(w.b, ' ')
				}
				spaces = true
				continue
			}
			if c == '\'' {
				w.b = append(w.b, '\'')
			}
			w.b = append(w.b, c)
			spaces = false
		}
		w.b = append(w.b, '\'')
	case styleDouble:
		w.b = append(w.b, '"')
		spaces := false
		for i := 0; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '"' || c == '\\':
				w.b = append(w.b, '\\', c)
				spaces = false
			case c == ' ':
				if !spaces && w.col() > yamlWidth && i > 0 && i < len(s)-1 {
					w.newline()
					w.pad(indent)
					if s[i+1] == ' ' {
						w.b = append(w.b, '\\')
					}
				} else {
					w.b = append(w.b, ' ')
				}
				spaces = true
			default:
				w.b = append(w.b, c)
				spaces = false
			}
		}
		w.b = append(w.b, '"')
	default:
		w.slow = true
	}
	w.newline()
	w.pend = pendNone
}

func appendSingle(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			b = append(b, '\'')
		}
		b = append(b, s[i])
	}
	return b
}

func appendDouble(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return b
}

// Helpers for omitempty fields. Each writes "key: value" under a mapping at
// column col, or nothing for an empty value.

func (w *ywriter) fieldStr(col int, k, v string) {
	if v != "" {
		w.key(col, k)
		w.str(col, v)
	}
}

func (w *ywriter) fieldStrings(col int, k string, v []string) {
	if len(v) == 0 {
		return
	}
	w.key(col, k)
	for _, s := range v {
		w.item(col)
		w.str(col, s)
	}
}

// specStr, specStrings, specBool and specInt write a spec field, leaving
// it out when empty only if SpecFields says kubepkg tags it omitempty, as
// sigs.k8s.io/yaml does for those types: "" for an empty string, null for
// a nil list and [] for an empty one.
func (w *ywriter) specStr(col int, f specField, v string) {
	if v != "" || !f.omitEmpty() {
		w.key(col, f.name())
		w.str(col, v)
	}
}

func (w *ywriter) specInt(col int, f specField, v int) {
	if v != 0 || !f.omitEmpty() {
		w.key(col, f.name())
		w.int(v)
	}
}

func (w *ywriter) specBool(col int, f specField, v bool) {
	if v || !f.omitEmpty() {
		w.key(col, f.name())
		w.bool(v)
	}
}

func (w *ywriter) specStrings(col int, f specField, v []string) {
	switch {
	case len(v) > 0:
		w.fieldStrings(col, f.name(), v)
	case f.omitEmpty():
	case v == nil:
		w.key(col, f.name())
		w.empty("null")
	default:
		w.key(col, f.name())
		w.empty("[]")
	}
}

// mapping writes a struct value with fn, which writes its fields as a
// mapping at column col; a struct without fields is written "{}".
func (w *ywriter) mapping(col int, fn func(col int)) {
	n := len(w.b)
	fn(col)
	if len(w.b) == n {
		w.empty("{}")
	}
}

// Writers of the spec types, fields in yaml.v2 key order. TestWriterFieldOrder
// checks the order against the structs' JSON names.

func writeSpec(w *ywriter, col int, s *PackageSpec) {
	w.mapping(col, func(col int) {
		w.specInt(col, fSpecBuild, s.Build)
		w.specStrings(col, fSpecConflicts, s.Conflicts)
		w.specStrings(col, fSpecCRDs, s.CRDs)
		w.specStrings(col, fSpecImages, s.Images)
		if s.Permissions != nil {
			w.key(col, "permissions")
			writePermissions(w, col+2, s.Permissions)
		}
		w.specStrings(col, fSpecProvides, s.Provides)
		if s.Rollback != nil {
			w.key(col, "rollback")
			w.mapping(col+2, func(col int) { w.specBool(col, fRollbackSafe, s.Rollback.Safe) })
		}
		if s.SourceRef != nil {
			w.key(col, "sourceRef")
			w.mapping(col+2, func(col int) {
				r := s.SourceRef
				w.specStr(col, fRefKind, r.Kind)
				w.specStr(col, fRefName, r.Name)
				w.specStr(col, fRefNamespace, r.Namespace)
				w.specStr(col, fRefPath, r.Path)
				w.specStr(col, fRefURL, r.URL)
			})
		}
		if len(s.Variants) > 0 {
			w.key(col, "variants")
			for i := range s.Variants {
				w.item(col)
				writeVariant(w, col+2, &s.Variants[i])
			}
		}
		w.specStr(col, fSpecVersion, s.Version)
	})
}

func writePermissions(w *ywriter, col int, p *Permissions) {
	w.mapping(col, func(col int) {
		w.specBool(col, fPermClusterWide, p.ClusterWide)
		if len(p.Rules) > 0 {
			w.key(col, "rules")
			for i := range p.Rules {
				r := &p.Rules[i]
				w.item(col)
				w.mapping(col+2, func(col int) {
					w.specStrings(col, fRuleAPIGroups, r.APIGroups)
					w.specStrings(col, fRuleNonResourceURLs, r.NonResourceURLs)
					w.specStrings(col, fRuleResourceNames, r.ResourceNames)
					w.specStrings(col, fRuleResources, r.Resources)
					w.specStrings(col, fRuleVerbs, r.Verbs)
				})
			}
		}
	})
}

func writeVariant(w *ywriter, col int, v *Variant) {
	w.mapping(col, func(col int) {
		if len(v.Components) > 0 {
			w.key(col, "components")
			for i := range v.Components {
				w.item(col)
				writeComponent(w, col+2, &v.Components[i])
			}
		}
		w.specStrings(col, fVariantDependsOn, v.DependsOn)
		if len(v.Libraries) > 0 {
			w.key(col, "libraries")
			for i := range v.Libraries {
				l := &v.Libraries[i]
				w.item(col)
				w.mapping(col+2, func(col int) {
					w.specStr(col, fLibName, l.Name)
					w.specStr(col, fLibPath, l.Path)
				})
			}
		}
		w.specStr(col, fVariantName, v.Name)
		if len(v.Requires) > 0 {
			w.key(col, "requires")
			for i := range v.Requires {
				q := &v.Requires[i]
				w.item(col)
				w.mapping(col+2, func(col int) {
					w.specStr(col, fReqCapability, q.Capability)
					w.specBool(col, fReqOptional, q.Optional)
					w.specStr(col, fReqPackage, q.Package)
					w.specStr(col, fReqVersion, q.Version)
				})
			}
		}
	})
}

func writeComponent(w *ywriter, col int, c *Component) {
	w.mapping(col, func(col int) {
		if c.Chart != nil {
			w.key(col, "chart")
			w.mapping(col+2, func(col int) {
				w.specStr(col, fChartDigest, c.Chart.Digest)
				w.specStr(col, fChartName, c.Chart.Name)
				w.specStr(col, fChartRepository, c.Chart.Repository)
				w.specStr(col, fChartVersion, c.Chart.Version)
			})
		}
		if c.Install != nil {
			w.key(col, "install")
			writeInstall(w, col+2, c.Install)
		}
		w.specStrings(col, fCompLibraries, c.Libraries)
		w.specStr(col, fCompName, c.Name)
		w.specStr(col, fCompPath, c.Path)
		w.specStrings(col, fCompValuesFiles, c.ValuesFiles)
	})
}

func writeInstall(w *ywriter, col int, in *Install) {
	w.mapping(col, func(col int) {
		w.specStrings(col, fInstDependsOn, in.DependsOn)
		if len(in.HealthCheckExprs) > 0 {
			w.key(col, "healthCheckExprs")
			for i := range in.HealthCheckExprs {
				h := &in.HealthCheckExprs[i]
				w.item(col)
				w.mapping(col+2, func(col int) {
					w.specStr(col, fCheckAPIVersion, h.APIVersion)
					w.specStr(col, fCheckCurrent, h.Current)
					w.specStr(col, fCheckFailed, h.Failed)
					w.specStr(col, fCheckInProgress, h.InProgress)
					w.specStr(col, fCheckKind, h.Kind)
				})
			}
		}
		w.specStr(col, fInstNamespace, in.Namespace)
		w.specStr(col, fInstPhase, in.Phase)
		w.specBool(col, fInstPrivileged, in.Privileged)
		if len(in.ReadyWhen) > 0 {
			w.key(col, "readyWhen")
			for i := range in.ReadyWhen {
				rw := &in.ReadyWhen[i]
				w.item(col)
				w.mapping(col+2, func(col int) {
					w.specStr(col, fReadyAPIVersion, rw.APIVersion)
					w.specStr(col, fReadyCondition, rw.Condition)
					w.specStr(col, fReadyKind, rw.Kind)
					w.specStr(col, fReadyName, rw.Name)
					w.specStr(col, fReadyNamespace, rw.Namespace)
					w.specStr(col, fReadyStatus, rw.Status)
				})
			}
		}
		w.specStr(col, fInstReleaseName, in.ReleaseName)
		w.specStr(col, fInstUpgradeCRDs, in.UpgradeCRDs)
		w.specStr(col, fInstWaitStrategy, in.WaitStrategy)
	})
}

func writeSignatures(w *ywriter, col int, sigs []Signature) {
	for i := range sigs {
		s := &sigs[i]
		w.item(col)
		w.mapping(col+2, func(col int) {
			w.key(col, "keyid")
			w.str(col, s.KeyID)
			w.key(col, "sig")
			w.str(col, s.Sig)
		})
	}
}
