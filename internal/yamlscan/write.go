package yamlscan

import (
	"strconv"
	"strings"
)

// Writer writes block YAML byte for byte as go.yaml.in/yaml/v2 (and so
// sigs.k8s.io/yaml) writes the same values: keys in yaml.v2 order, two-space
// indentation, sequences not indented under their key, the same choice of
// plain, single- or double-quoted style and the same folding of long
// strings at column 80.
//
// It only handles strings of printable ASCII on one line. On any other
// string it sets Slow, and the caller writes that part with
// sigs.k8s.io/yaml instead (index's yaml_test.go compares both).
type Writer struct {
	// B is what was written.
	B         []byte
	lineStart int
	pend      pending
	// Slow is set when a part could not be written (see above).
	Slow bool
}

// pending is what the last written indicator waits for.
type pending uint8

const (
	pendNone pending = iota // at the start of a line
	pendKey                 // after "key:"
	pendDash                // after "-"
)

const yamlWidth = 80 // yaml.v2's preferred line width

func (w *Writer) col() int { return len(w.B) - w.lineStart }

// Newline ends the current line.
func (w *Writer) Newline() {
	w.B = append(w.B, '\n')
	w.lineStart = len(w.B)
}

const spaces64 = "                                                                "

func (w *Writer) pad(n int) {
	for c := w.col(); c < n; c = w.col() {
		w.B = append(w.B, spaces64[:min(n-c, len(spaces64))]...)
	}
}

// Key starts the mapping entry k of a mapping at column col.
func (w *Writer) Key(col int, k string) {
	switch w.pend {
	case pendKey:
		w.Newline()
		w.pad(col)
	case pendDash:
		w.B = append(w.B, ' ')
	default:
		w.pad(col)
	}
	if len(k) > 128 {
		w.Slow = true
	}
	switch chooseStyle(k) {
	case stylePlain:
		w.B = append(w.B, k...)
	case styleSingle:
		w.B = append(w.B, '\'')
		w.B = appendSingle(w.B, k)
		w.B = append(w.B, '\'')
	case styleDouble:
		w.B = append(w.B, '"')
		w.B = appendDouble(w.B, k)
		w.B = append(w.B, '"')
	default:
		w.Slow = true
	}
	w.B = append(w.B, ':')
	w.pend = pendKey
}

// Item starts an entry of a sequence whose dashes are at column col.
func (w *Writer) Item(col int) {
	switch w.pend {
	case pendKey:
		w.Newline()
		w.pad(col)
	case pendDash:
		w.B = append(w.B, ' ')
	default:
		w.pad(col)
	}
	w.B = append(w.B, '-')
	w.pend = pendDash
}

// Empty ends a mapping or sequence value that had no entries.
func (w *Writer) Empty(flow string) {
	if w.pend != pendNone {
		w.B = append(w.B, ' ')
		w.B = append(w.B, flow...)
		w.Newline()
		w.pend = pendNone
	}
}

// Int writes n as the value of the pending key or item and ends the line.
func (w *Writer) Int(n int) {
	w.B = append(w.B, ' ')
	w.B = strconv.AppendInt(w.B, int64(n), 10)
	w.Newline()
	w.pend = pendNone
}

// Bool writes v as the value of the pending key or item and ends the line.
func (w *Writer) Bool(v bool) {
	w.B = append(w.B, ' ')
	w.B = strconv.AppendBool(w.B, v)
	w.Newline()
	w.pend = pendNone
}

// Str writes the string value of the indicator at column ind; folded lines
// continue at ind+2.
func (w *Writer) Str(ind int, s string) {
	indent := ind + 2
	w.B = append(w.B, ' ')
	style := chooseStyle(s)
	// Without a space past the width, nothing folds; without quotes or
	// backslashes, nothing is escaped: copy the string whole.
	if w.col()+len(s) <= yamlWidth+1 || strings.IndexByte(s, ' ') < 0 {
		switch {
		case style == stylePlain:
			w.B = append(w.B, s...)
			w.Newline()
			w.pend = pendNone
			return
		case style == styleSingle && strings.IndexByte(s, '\'') < 0:
			w.B = append(w.B, '\'')
			w.B = append(w.B, s...)
			w.B = append(w.B, '\'')
			w.Newline()
			w.pend = pendNone
			return
		case style == styleDouble && !strings.ContainsAny(s, "\"\\"):
			w.B = append(w.B, '"')
			w.B = append(w.B, s...)
			w.B = append(w.B, '"')
			w.Newline()
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
					w.Newline()
					w.pad(indent)
				} else {
					w.B = append(w.B, ' ')
				}
				spaces = true
				continue
			}
			w.B = append(w.B, c)
			spaces = false
		}
	case styleSingle:
		w.B = append(w.B, '\'')
		spaces := false
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c == ' ' {
				if !spaces && w.col() > yamlWidth && i > 0 && i < len(s)-1 && s[i+1] != ' ' {
					w.Newline()
					w.pad(indent)
				} else {
					w.B = append(w.B, ' ')
				}
				spaces = true
				continue
			}
			if c == '\'' {
				w.B = append(w.B, '\'')
			}
			w.B = append(w.B, c)
			spaces = false
		}
		w.B = append(w.B, '\'')
	case styleDouble:
		w.B = append(w.B, '"')
		spaces := false
		for i := 0; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '"' || c == '\\':
				w.B = append(w.B, '\\', c)
				spaces = false
			case c == ' ':
				if !spaces && w.col() > yamlWidth && i > 0 && i < len(s)-1 {
					w.Newline()
					w.pad(indent)
					if s[i+1] == ' ' {
						w.B = append(w.B, '\\')
					}
				} else {
					w.B = append(w.B, ' ')
				}
				spaces = true
			default:
				w.B = append(w.B, c)
				spaces = false
			}
		}
		w.B = append(w.B, '"')
	default:
		w.Slow = true
	}
	w.Newline()
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

// FieldStr writes "k: v" at column col unless v is "".
func (w *Writer) FieldStr(col int, k, v string) {
	if v != "" {
		w.Key(col, k)
		w.Str(col, v)
	}
}

// FieldStrings writes k and the sequence v at column col unless v is empty.
func (w *Writer) FieldStrings(col int, k string, v []string) {
	if len(v) == 0 {
		return
	}
	w.Key(col, k)
	for _, s := range v {
		w.Item(col)
		w.Str(col, s)
	}
}

// Mapping writes a struct value with fn, which writes its fields as a
// Mapping at column col; a struct without fields is written "{}".
func (w *Writer) Mapping(col int, fn func(col int)) {
	n := len(w.B)
	fn(col)
	if len(w.B) == n {
		w.Empty("{}")
	}
}

// Mark is a position of a Writer to go back to.
type Mark struct {
	n, lineStart int
	pend         pending
}

// Save returns the current position.
func (w *Writer) Save() Mark { return Mark{len(w.B), w.lineStart, w.pend} }

// Restore goes back to m, dropping what was written since, and clears Slow.
func (w *Writer) Restore(m Mark) {
	w.B, w.lineStart, w.pend, w.Slow = w.B[:m.n], m.lineStart, m.pend, false
}

// AppendLines appends whole lines written by yaml.v2.
func (w *Writer) AppendLines(part []byte) {
	if len(part) == 0 {
		return
	}
	if w.pend != pendNone {
		w.Newline()
	}
	w.B = append(w.B, part...)
	w.lineStart = len(w.B)
	w.pend = pendNone
}

// EndLine ends the current line: what follows starts at column 0.
func (w *Writer) EndLine() {
	w.Newline()
	w.pend = pendNone
}
