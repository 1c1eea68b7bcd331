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
		case style == styleDouble && strings.IndexAny(s, "\"\\") < 0:
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

func (w *ywriter) fieldInt(col int, k string, v int) {
	if v != 0 {
		w.key(col, k)
		w.int(v)
	}
}

func (w *ywriter) fieldBool(col int, k string, v bool) {
	if v {
		w.key(col, k)
		w.bool(v)
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
		w.fieldInt(col, "build", s.Build)
		w.fieldStrings(col, "conflicts", s.Conflicts)
		w.fieldStrings(col, "crds", s.CRDs)
		w.fieldStrings(col, "images", s.Images)
		if s.Permissions != nil {
			w.key(col, "permissions")
			writePermissions(w, col+2, s.Permissions)
		}
		w.fieldStrings(col, "provides", s.Provides)
		if s.Rollback != nil {
			w.key(col, "rollback")
			w.mapping(col+2, func(col int) { w.fieldBool(col, "safe", s.Rollback.Safe) })
		}
		if s.SourceRef != nil {
			w.key(col, "sourceRef")
			w.mapping(col+2, func(col int) {
				r := s.SourceRef
				w.fieldStr(col, "kind", r.Kind)
				w.fieldStr(col, "name", r.Name)
				w.fieldStr(col, "namespace", r.Namespace)
				w.fieldStr(col, "path", r.Path)
				w.fieldStr(col, "url", r.URL)
			})
		}
		if len(s.Variants) > 0 {
			w.key(col, "variants")
			for i := range s.Variants {
				w.item(col)
				writeVariant(w, col+2, &s.Variants[i])
			}
		}
		w.fieldStr(col, "version", s.Version)
	})
}

func writePermissions(w *ywriter, col int, p *Permissions) {
	w.mapping(col, func(col int) {
		w.fieldBool(col, "clusterWide", p.ClusterWide)
		if len(p.Rules) > 0 {
			w.key(col, "rules")
			for i := range p.Rules {
				r := &p.Rules[i]
				w.item(col)
				w.mapping(col+2, func(col int) {
					w.fieldStrings(col, "apiGroups", r.APIGroups)
					w.fieldStrings(col, "nonResourceURLs", r.NonResourceURLs)
					w.fieldStrings(col, "resourceNames", r.ResourceNames)
					w.fieldStrings(col, "resources", r.Resources)
					w.fieldStrings(col, "verbs", r.Verbs)
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
		w.fieldStrings(col, "dependsOn", v.DependsOn)
		if len(v.Libraries) > 0 {
			w.key(col, "libraries")
			for i := range v.Libraries {
				l := &v.Libraries[i]
				w.item(col)
				w.mapping(col+2, func(col int) {
					w.fieldStr(col, "name", l.Name)
					w.fieldStr(col, "path", l.Path)
				})
			}
		}
		w.fieldStr(col, "name", v.Name)
		if len(v.Requires) > 0 {
			w.key(col, "requires")
			for i := range v.Requires {
				q := &v.Requires[i]
				w.item(col)
				w.mapping(col+2, func(col int) {
					w.fieldStr(col, "capability", q.Capability)
					w.fieldBool(col, "optional", q.Optional)
					w.fieldStr(col, "package", q.Package)
					w.fieldStr(col, "version", q.Version)
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
				w.fieldStr(col, "digest", c.Chart.Digest)
				w.fieldStr(col, "name", c.Chart.Name)
				w.fieldStr(col, "repository", c.Chart.Repository)
				w.fieldStr(col, "version", c.Chart.Version)
			})
		}
		if c.Install != nil {
			w.key(col, "install")
			writeInstall(w, col+2, c.Install)
		}
		w.fieldStrings(col, "libraries", c.Libraries)
		w.fieldStr(col, "name", c.Name)
		w.fieldStr(col, "path", c.Path)
		w.fieldStrings(col, "valuesFiles", c.ValuesFiles)
	})
}

func writeInstall(w *ywriter, col int, in *Install) {
	w.mapping(col, func(col int) {
		w.fieldStrings(col, "dependsOn", in.DependsOn)
		if len(in.HealthCheckExprs) > 0 {
			w.key(col, "healthCheckExprs")
			for i := range in.HealthCheckExprs {
				h := &in.HealthCheckExprs[i]
				w.item(col)
				w.mapping(col+2, func(col int) {
					w.fieldStr(col, "apiVersion", h.APIVersion)
					w.fieldStr(col, "current", h.Current)
					w.fieldStr(col, "failed", h.Failed)
					w.fieldStr(col, "inProgress", h.InProgress)
					w.fieldStr(col, "kind", h.Kind)
				})
			}
		}
		w.fieldStr(col, "namespace", in.Namespace)
		w.fieldStr(col, "phase", in.Phase)
		w.fieldBool(col, "privileged", in.Privileged)
		if len(in.ReadyWhen) > 0 {
			w.key(col, "readyWhen")
			for i := range in.ReadyWhen {
				rw := &in.ReadyWhen[i]
				w.item(col)
				w.mapping(col+2, func(col int) {
					w.fieldStr(col, "apiVersion", rw.APIVersion)
					w.fieldStr(col, "condition", rw.Condition)
					w.fieldStr(col, "kind", rw.Kind)
					w.fieldStr(col, "name", rw.Name)
					w.fieldStr(col, "namespace", rw.Namespace)
					w.fieldStr(col, "status", rw.Status)
				})
			}
		}
		w.fieldStr(col, "releaseName", in.ReleaseName)
		w.fieldStr(col, "upgradeCRDs", in.UpgradeCRDs)
		w.fieldStr(col, "waitStrategy", in.WaitStrategy)
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
