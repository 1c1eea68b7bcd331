// Package yamlscan reads and writes the block-style YAML subset that
// go.yaml.in/yaml/v2 (and so sigs.k8s.io/yaml) writes, byte for byte as
// that library does, fast enough for an index of 100,000 versions; and
// holds the slow path's checks (CheckPlain, NoDuplicateKeys) for what is
// left to sigs.k8s.io/yaml. It knows no kbuild type: typed decoders and
// encoders (package index) drive it.
package yamlscan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	yaml3 "go.yaml.in/yaml/v3"
)

// Reader decodes the block-style YAML that go.yaml.in/yaml/v2 writes
// (block mappings and sequences, plain, quoted and literal scalars, empty
// flow collections) straight into Go values, fast enough for an index of
// 100,000 versions. Typed decoders drive it: ReadMap, ReadSeq and the scalar
// readers each read the value that follows a "key:" or "-" indicator.
//
// It does not implement YAML. Whenever the input uses anything else (flow
// collections, anchors and aliases, tags, folded scalars, tabs, several
// documents, keys or values the typed decoder does not know, plain scalars
// that YAML 1.1 reads as booleans or numbers) it stops with a *Bail, and
// the caller decodes the document with sigs.k8s.io/yaml instead, which is
// authoritative. On what it accepts it must agree with sigs.k8s.io/yaml
// exactly; index's FuzzParseIndex checks that. A typed decoder that skips
// keys it does not know (as kubepkg's client does in an index) skips their
// values with SkipValue.
type Reader struct {
	s         string
	pos       int  // next unread byte
	lineStart int  // offset of the line pos is on
	eol       int  // offset of the '\n' ending that line, or len(s)
	line      int  // 1-based line of pos
	ind       int  // column of the indicator ("key" or "-") whose value is next
	dash      bool // the indicator was "-": a mapping may start on its line
	seqOK     bool // a sequence may start at column ind (mapping values)
}

// Bail reports where and why the fast reader gave up.
type Bail struct {
	Line int
	Msg  string
	// Refused is set when sigs.k8s.io/yaml, and so kubepkg's client,
	// refuses the document too: no need to read it again.
	Refused bool
}

func (e *Bail) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Bailf returns a *Bail at the reader's line.
func (r *Reader) Bailf(format string, args ...any) error {
	return &Bail{Line: r.line, Msg: fmt.Sprintf(format, args...)}
}

// NewReader checks that b holds only characters the fast reader handles
// and positions a reader of a copy of b before the document's root
// mapping. With share, the reader and the strings it returns use b itself,
// which must then never be modified while they are in use.
func NewReader(b []byte, share bool) (*Reader, error) {
	if err := CheckChars(b); err != nil {
		return nil, err
	}
	var s string
	if share && len(b) > 0 {
		s = unsafe.String(&b[0], len(b))
	} else {
		s = string(b)
	}
	r := &Reader{s: s, line: 1, ind: -1, seqOK: false}
	r.eol = r.FindEOL(0)
	// An optional "---" start marker, alone on its line.
	if strings.HasPrefix(s, "---") && (len(s) == 3 || s[3] == '\n' || s[3] == ' ') {
		rest := r.lineRest(3)
		if rest != "" {
			return nil, r.Bailf("content after the document marker")
		}
		r.nextLine()
	}
	return r, nil
}

// Src is the text the reader reads.
func (r *Reader) Src() string { return r.s }

// Pos is the offset of the next unread byte.
func (r *Reader) Pos() int { return r.pos }

// Line is the 1-based line of Pos.
func (r *Reader) Line() int { return r.line }

// LineStart is the offset of the line Pos is on.
func (r *Reader) LineStart() int { return r.lineStart }

// Ind is the column of the indicator ("key" or "-") whose value is next.
func (r *Reader) Ind() int { return r.ind }

// Part returns a reader of r's text up to stop, at the first key of a
// block mapping at column col whose line starts at offset lineStart (line
// line), inside a mapping value of a key at column ind: what reads one
// part of a large mapping split at its key lines.
func (r *Reader) Part(stop, lineStart, line, col, ind int) *Reader {
	p := &Reader{s: r.s[:stop], pos: lineStart + col, lineStart: lineStart, line: line, ind: ind, seqOK: true}
	p.eol = p.FindEOL(lineStart)
	return p
}

// Seek moves r to offset off, the start of line line.
func (r *Reader) Seek(off, line int) {
	r.pos, r.lineStart, r.line = off, off, line
	r.eol = r.FindEOL(off)
}

// ItemEnd returns the offset of the first line after start, the start of
// a sequence entry whose "-" is at column dash, that has content at column
// dash or less: the end of the entry.
func (r *Reader) ItemEnd(start, dash int) int {
	off := r.FindEOL(start) + 1
	for off < len(r.s) {
		eol := r.FindEOL(off)
		i := off
		for i < eol && r.s[i] == ' ' {
			i++
		}
		if i < eol && r.s[i] != '#' && i-off <= dash {
			return off
		}
		off = eol + 1
	}
	return len(r.s)
}

// CheckChars refuses input the fast reader does not handle: invalid UTF-8,
// control characters (tabs and carriage returns included), a byte-order
// mark, and the YAML 1.1 line breaks NEL, LS and PS. Large input is checked
// in parallel parts, split before ASCII bytes.
func CheckChars(s []byte) error {
	const part = 16 << 20
	if len(s) < 2*part {
		return checkCharsFrom(s, 0, len(s))
	}
	var cuts []int
	for c := 0; c < len(s); c += part {
		for c < len(s) && c > 0 && s[c] >= utf8.RuneSelf {
			c++
		}
		cuts = append(cuts, c)
	}
	cuts = append(cuts, len(s))
	// One goroutine a part (64 for a document of 1 GiB), each recovering.
	errs := make([]error, len(cuts)-1)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer Recover(&errs[i], nil)
			errs[i] = checkCharsFrom(s, cuts[i], cuts[i+1])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkCharsFrom is CheckChars of s[from:to].
func checkCharsFrom(s []byte, from, to int) error {
	lineAt := func(i int) int { return 1 + bytes.Count(s[:i], []byte{'\n'}) }
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for i := from; i < to; {
		// Eight bytes at a time: skip words of printable ASCII.
		if i+8 <= to {
			v := binary.LittleEndian.Uint64(s[i:])
			low := (v - 0x20*ones) & ^v & highs // some byte < 0x20
			d := v ^ 0x7f*ones
			del := (d - ones) & ^d & highs // some byte == 0x7f
			if (v&highs)|low|del == 0 {
				i += 8
				continue
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n') || c == 0x7f {
				return &Bail{Line: lineAt(i), Msg: fmt.Sprintf("control character %#02x", c)}
			}
			i++
			continue
		}
		ru, n := utf8.DecodeRune(s[i:to])
		switch {
		case ru == utf8.RuneError && n == 1:
			return &Bail{Line: lineAt(i), Msg: "invalid UTF-8"}
		case ru < 0xa0, ru == 0x2028, ru == 0x2029, ru == 0xfeff, ru == 0xfffe, ru == 0xffff:
			return &Bail{Line: lineAt(i), Msg: fmt.Sprintf("character %U", ru)}
		}
		i += n
	}
	return nil
}

// lineEnd returns the offset of the '\n' ending the line containing i, or
// len(s).
func (r *Reader) lineEnd(i int) int {
	if i >= r.lineStart && i <= r.eol {
		return r.eol
	}
	return r.FindEOL(i)
}

// FindEOL returns the index of the first newline at or after i, or len of
// the input when there is none.
func (r *Reader) FindEOL(i int) int {
	if j := strings.IndexByte(r.s[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(r.s)
}

// lineRest returns what follows offset i on its line, without trailing
// spaces and a comment ("#" after a space or at i).
func (r *Reader) lineRest(i int) string {
	end := r.lineEnd(i)
	rest := r.s[i:end]
	rest = strings.TrimLeft(rest, " ")
	if strings.HasPrefix(rest, "#") {
		return ""
	}
	if k := strings.Index(rest, " #"); k >= 0 {
		rest = rest[:k]
	}
	return strings.TrimRight(rest, " ")
}

// nextLine moves pos to the start of the next line.
func (r *Reader) nextLine() {
	end := r.lineEnd(r.pos)
	if end < len(r.s) {
		r.pos = end + 1
		r.line++
	} else {
		r.pos = end
	}
	r.lineStart = r.pos
	r.eol = r.FindEOL(r.pos)
}

// nextContent moves pos (at a line start) to the first non-space byte of
// the next line that is neither blank nor a comment and returns its column,
// or -1 at the end of input. A document marker ends the input for the fast
// reader.
func (r *Reader) nextContent() (int, error) {
	for r.pos < len(r.s) {
		i := r.pos
		for i < len(r.s) && r.s[i] == ' ' {
			i++
		}
		if i == len(r.s) {
			r.pos = i
			return -1, nil
		}
		if r.s[i] == '\n' || r.s[i] == '#' {
			r.nextLine()
			continue
		}
		if i == r.lineStart && (strings.HasPrefix(r.s[i:], "---") || strings.HasPrefix(r.s[i:], "...")) {
			if e := i + 3; e == len(r.s) || r.s[e] == ' ' || r.s[e] == '\n' {
				return 0, r.Bailf("a second YAML document or a document end marker")
			}
		}
		r.pos = i
		return i - r.lineStart, nil
	}
	return -1, nil
}

// col is the column of pos.
func (r *Reader) col() int { return r.pos - r.lineStart }

// skipSpaces moves pos over spaces on the current line.
func (r *Reader) skipSpaces() {
	for r.pos < len(r.s) && r.s[r.pos] == ' ' {
		r.pos++
	}
}

// AtLineEnd reports whether only spaces and a comment remain on the line.
func (r *Reader) AtLineEnd() bool {
	i := r.pos
	for i < len(r.s) && r.s[i] == ' ' {
		i++
	}
	if i == len(r.s) || r.s[i] == '\n' {
		return true
	}
	// "#" starts a comment after a space or at the start of a line.
	return r.s[i] == '#' && (i == r.lineStart || r.s[i-1] == ' ')
}

// finishLine requires that only spaces and a comment remain on the line and
// moves to the next one.
func (r *Reader) finishLine() error {
	if !r.AtLineEnd() {
		return r.Bailf("unexpected %q after a value", strings.TrimSpace(r.s[r.pos:r.lineEnd(r.pos)]))
	}
	r.nextLine()
	return nil
}

// isDash reports whether a block sequence entry starts at i.
func (r *Reader) isDash(i int) bool {
	return i < len(r.s) && r.s[i] == '-' && (i+1 == len(r.s) || r.s[i+1] == ' ' || r.s[i+1] == '\n')
}

// ReadRoot reads the document's root mapping, calling fn with each key.
func (r *Reader) ReadRoot(fn func(key string) error) error {
	c, err := r.nextContent()
	if err != nil || c < 0 {
		return err
	}
	if c != 0 {
		return r.Bailf("the document does not start at column 0")
	}
	c, err = r.MapLoop(0, fn)
	if err != nil {
		return err
	}
	if c >= 0 {
		return r.Bailf("content after the document's root mapping")
	}
	return nil
}

// ReadMap reads a mapping value, calling fn with each key; fn must read the
// key's value. It reports whether a mapping was present (false for null).
func (r *Reader) ReadMap(fn func(key string) error) (bool, error) {
	ind, dash, seqOK := r.ind, r.dash, r.seqOK
	defer func() { r.ind, r.dash, r.seqOK = ind, dash, seqOK }()
	r.skipSpaces()
	var col int
	if r.AtLineEnd() {
		r.nextLine()
		c, err := r.nextContent()
		if err != nil {
			return false, err
		}
		if c <= ind {
			if c == ind && seqOK && r.isDash(r.pos) {
				return false, r.Bailf("a sequence where a mapping belongs")
			}
			return false, nil // null
		}
		col = c
	} else {
		switch rest := r.lineRest(r.pos); {
		case rest == "{}":
			r.pos += 2
			return true, r.finishLine()
		case rest == "null" || rest == "~" || rest == "Null" || rest == "NULL":
			r.pos += len(rest)
			return false, r.finishLine()
		case !dash:
			return false, r.Bailf("a mapping where %q is", rest)
		}
		col = r.col()
	}
	_, err := r.MapLoop(col, fn)
	return err == nil, err
}

// MapLoop reads the keys of a block mapping at column col, pos being at the
// first key, and returns the column of the line after it (-1 at the end).
func (r *Reader) MapLoop(col int, fn func(key string) error) (int, error) {
	var seenArr [12]string
	seen := seenArr[:0]
	var seenSet map[string]bool
	for {
		if r.isDash(r.pos) {
			return 0, r.Bailf("a sequence entry where a mapping key belongs")
		}
		key, err := r.ReadKey()
		if err != nil {
			return 0, err
		}
		dup := false
		if seenSet != nil {
			dup = seenSet[key]
			seenSet[key] = true
		} else {
			for _, k := range seen {
				dup = dup || k == key
			}
			seen = append(seen, key)
			if len(seen) > 16 {
				seenSet = map[string]bool{}
				for _, k := range seen {
					seenSet[k] = true
				}
			}
		}
		if dup {
			return 0, r.Bailf("duplicate key %q", key)
		}
		r.ind, r.dash, r.seqOK = col, false, true
		if err := fn(key); err != nil {
			return 0, err
		}
		c, err := r.nextContent()
		if err != nil {
			return 0, err
		}
		if c < col {
			return c, nil
		}
		if c > col {
			return 0, r.Bailf("unexpected indentation")
		}
	}
}

// ReadKey reads a simple mapping key and the ':' after it.
func (r *Reader) ReadKey() (string, error) {
	var key string
	switch c := r.s[r.pos]; c {
	case '"', '\'':
		v, err := r.quoted(false)
		if err != nil {
			return "", err
		}
		key = v
		if r.pos >= len(r.s) || r.s[r.pos] != ':' {
			return "", r.Bailf("expected ':' after key %q", key)
		}
	case '?', '&', '*', '!', '|', '>', '%', '@', '`', '[', ']', '{', '}', ',', '#', ':':
		return "", r.Bailf("unsupported key syntax %q", c)
	default:
		end := r.lineEnd(r.pos)
		i := r.pos
		for ; i < end; i++ {
			if r.s[i] == ':' && (i+1 == end || r.s[i+1] == ' ') {
				break
			}
			if r.s[i] == '#' && r.s[i-1] == ' ' {
				return "", r.Bailf("expected a mapping key")
			}
		}
		if i == end {
			return "", r.Bailf("expected a mapping key")
		}
		key = strings.TrimRight(r.s[r.pos:i], " ")
		if ResolvePlain(key) != PlainStr || key == "<<" {
			return "", r.Bailf("key %q is not a plain string", key)
		}
		r.pos = i
	}
	if len(key) > 1000 {
		return "", r.Bailf("key too long")
	}
	r.pos++ // ':'
	if r.pos < len(r.s) && r.s[r.pos] != ' ' && r.s[r.pos] != '\n' {
		return "", r.Bailf("expected a space after ':'")
	}
	return key, nil
}

// ReadSeq reads a sequence value, calling fn for each entry; fn must read
// the entry. It reports whether a sequence was present (false for null).
func (r *Reader) ReadSeq(fn func() error) (bool, error) {
	ind, dash, seqOK := r.ind, r.dash, r.seqOK
	defer func() { r.ind, r.dash, r.seqOK = ind, dash, seqOK }()
	r.skipSpaces()
	if !r.AtLineEnd() {
		switch rest := r.lineRest(r.pos); rest {
		case "[]":
			r.pos += 2
			return true, r.finishLine()
		case "null", "~", "Null", "NULL":
			r.pos += len(rest)
			return false, r.finishLine()
		default:
			return false, r.Bailf("a sequence where %q is", rest)
		}
	}
	r.nextLine()
	col, err := r.nextContent()
	if err != nil {
		return false, err
	}
	if col < ind || col == ind && !seqOK || !r.isDash(r.pos) {
		if col > ind {
			return false, r.Bailf("a mapping or scalar where a sequence belongs")
		}
		return false, nil
	}
	return true, r.SeqLoop(col, fn)
}

// SeqLoop reads the entries of a block sequence at column col, pos being
// at the first "-".
func (r *Reader) SeqLoop(col int, fn func() error) error {
	for {
		r.ind, r.dash, r.seqOK = col, true, false
		r.pos++ // '-'
		if err := fn(); err != nil {
			return err
		}
		c, err := r.nextContent()
		if err != nil {
			return err
		}
		if c != col || !r.isDash(r.pos) {
			if c > col {
				return r.Bailf("unexpected indentation")
			}
			return nil
		}
	}
}

// scalar is a scalar as read.
type scalar struct {
	v     string
	plain bool
	line  int
}

// ReadScalar reads a scalar value and moves to the next line.
func (r *Reader) ReadScalar() (scalar, error) {
	r.skipSpaces()
	line := r.line
	if r.AtLineEnd() {
		// Null, unless a more indented line follows (a scalar on its own
		// line, which the writer never produces).
		r.nextLine()
		c, err := r.nextContent()
		if err != nil {
			return scalar{}, err
		}
		if c > r.ind || c == r.ind && r.seqOK && r.isDash(r.pos) {
			return scalar{}, r.Bailf("a value on the line after its key")
		}
		return scalar{plain: true, line: line}, nil
	}
	switch c := r.s[r.pos]; c {
	case '"', '\'':
		v, err := r.quoted(true)
		if err != nil {
			return scalar{}, err
		}
		return scalar{v: v, line: line}, r.finishLine()
	case '|':
		v, err := r.literal()
		return scalar{v: v, line: line}, err
	case '>', '&', '*', '!', '%', '@', '`', '[', ']', '{', '}', ',', '#':
		return scalar{}, r.Bailf("unsupported value syntax %q", c)
	case '-', '?', ':':
		if r.pos+1 == len(r.s) || r.s[r.pos+1] == ' ' || r.s[r.pos+1] == '\n' {
			return scalar{}, r.Bailf("unsupported value syntax %q", c)
		}
	}
	v, err := r.plain()
	return scalar{v: v, plain: true, line: line}, err
}

// plain reads a plain scalar, which may continue on more indented lines.
func (r *Reader) plain() (string, error) {
	first, commented, err := r.plainLine(r.pos)
	if err != nil {
		return "", err
	}
	r.nextLine()
	var b *strings.Builder
	for r.pos < len(r.s) {
		// A continuation line: more indented than the indicator, not blank,
		// not a comment.
		i := r.pos
		for i < len(r.s) && r.s[i] == ' ' {
			i++
		}
		if i-r.lineStart <= r.ind || i == len(r.s) {
			break
		}
		if r.s[i] == '\n' || r.s[i] == '#' {
			return "", r.Bailf("a blank or comment line inside a multi-line plain scalar")
		}
		if commented {
			return "", r.Bailf("a comment inside a multi-line plain scalar")
		}
		cont, c, err := r.plainLine(i)
		if err != nil {
			return "", err
		}
		if b == nil {
			b = &strings.Builder{}
			b.WriteString(first)
		}
		b.WriteByte(' ')
		b.WriteString(cont)
		commented = c
		r.pos = i
		r.nextLine()
	}
	if b != nil {
		if commented {
			return "", r.Bailf("a comment after a multi-line plain scalar")
		}
		return b.String(), nil
	}
	return first, nil
}

// plainLine reads the part of a plain scalar on the line from i: up to a
// comment or the end, trailing spaces dropped. ": " inside is refused.
func (r *Reader) plainLine(i int) (val string, commented bool, err error) {
	end := r.lineEnd(i)
	for j := i; j < end; j++ {
		switch r.s[j] {
		case ':':
			if j+1 == end || r.s[j+1] == ' ' {
				return "", false, r.Bailf("\": \" inside a plain scalar")
			}
		case '#':
			if j > i && r.s[j-1] == ' ' {
				return strings.TrimRight(r.s[i:j], " "), true, nil
			}
		}
	}
	return strings.TrimRight(r.s[i:end], " "), false, nil
}

// quoted reads a single- or double-quoted scalar starting at pos, which may
// span lines when multi is true, and leaves pos after the closing quote.
func (r *Reader) quoted(multi bool) (string, error) {
	q := r.s[r.pos]
	r.pos++
	start := r.pos
	// Fast path: one line, no escapes.
	for i := r.pos; i < len(r.s); i++ {
		c := r.s[i]
		if c == q {
			if q == '\'' && i+1 < len(r.s) && r.s[i+1] == '\'' {
				break
			}
			r.pos = i + 1
			return r.s[start:i], nil
		}
		if c == '\\' && q == '"' || c == '\n' {
			break
		}
	}
	var b strings.Builder
	i := r.pos
	for {
		if i >= len(r.s) {
			return "", r.Bailf("unterminated quoted scalar")
		}
		c := r.s[i]
		switch {
		case c == q && q == '\'' && i+1 < len(r.s) && r.s[i+1] == '\'':
			b.WriteByte('\'')
			i += 2
		case c == q:
			r.pos = i + 1
			return b.String(), nil
		case c == '\\' && q == '"':
			n, err := r.escape(&b, i)
			if err != nil {
				return "", err
			}
			i += n
		case c == ' ' || c == '\n':
			// Whitespace: trailing spaces before a line break are dropped
			// and the break folds.
			j := i
			for j < len(r.s) && r.s[j] == ' ' {
				j++
			}
			if j < len(r.s) && r.s[j] != '\n' {
				b.WriteString(r.s[i:j])
				i = j
				continue
			}
			if j == len(r.s) {
				return "", r.Bailf("unterminated quoted scalar")
			}
			if !multi {
				return "", r.Bailf("a multi-line quoted key")
			}
			var err error
			if i, err = r.fold(&b, j); err != nil {
				return "", err
			}
		default:
			b.WriteByte(c)
			i++
		}
	}
}

// fold handles the line break at s[j] inside a quoted scalar: the break
// becomes a space, or the following empty lines become newlines, and the
// next line's indentation is skipped. It returns the offset to continue at.
func (r *Reader) fold(b *strings.Builder, j int) (int, error) {
	empties := 0
	for {
		r.pos = j
		r.nextLine()
		k := r.pos
		for k < len(r.s) && r.s[k] == ' ' {
			k++
		}
		if k < len(r.s) && r.s[k] == '\n' {
			empties++
			j = k
			continue
		}
		if k-r.lineStart <= r.ind {
			return 0, r.Bailf("a quoted scalar continued at too small an indentation")
		}
		if k == r.lineStart && (strings.HasPrefix(r.s[k:], "---") || strings.HasPrefix(r.s[k:], "...")) {
			return 0, r.Bailf("a document marker inside a quoted scalar")
		}
		if empties == 0 {
			b.WriteByte(' ')
		} else {
			for ; empties > 0; empties-- {
				b.WriteByte('\n')
			}
		}
		return k, nil
	}
}

var simpleEscapes = map[byte]string{
	'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", 'n': "\n", 'v': "\v",
	'f': "\f", 'r': "\r", 'e': "\x1b", ' ': " ", '"': "\"", '/': "/",
	'\\': "\\", 'N': "\u0085", '_': "\u00a0", 'L': "\u2028", 'P': "\u2029",
}

// escape decodes the escape sequence at s[i] ('\\') into b and returns its
// length.
func (r *Reader) escape(b *strings.Builder, i int) (int, error) {
	if i+1 >= len(r.s) {
		return 0, r.Bailf("unterminated escape")
	}
	c := r.s[i+1]
	if v, ok := simpleEscapes[c]; ok {
		b.WriteString(v)
		return 2, nil
	}
	n := 0
	switch c {
	case 'x':
		n = 2
	case 'u':
		n = 4
	case 'U':
		n = 8
	default:
		return 0, r.Bailf("unsupported escape \\%c", c)
	}
	if i+2+n > len(r.s) {
		return 0, r.Bailf("short escape")
	}
	var v rune
	for _, h := range []byte(r.s[i+2 : i+2+n]) {
		var d byte
		switch {
		case h >= '0' && h <= '9':
			d = h - '0'
		case h >= 'a' && h <= 'f':
			d = h - 'a' + 10
		case h >= 'A' && h <= 'F':
			d = h - 'A' + 10
		default:
			return 0, r.Bailf("bad hex escape")
		}
		v = v<<4 | rune(d)
	}
	if v >= 0xd800 && v <= 0xdfff || v > 0x10ffff {
		return 0, r.Bailf("invalid escaped character")
	}
	b.WriteRune(v)
	return 2 + n, nil
}

// literal reads a literal block scalar ("|", with optional chomping and
// indentation indicators) starting at pos.
func (r *Reader) literal() (string, error) {
	r.pos++
	chomp, indent := byte(0), 0
	for k := 0; k < 2 && r.pos < len(r.s); k++ {
		c := r.s[r.pos]
		switch {
		case (c == '-' || c == '+') && chomp == 0:
			chomp = c
		case c >= '1' && c <= '9' && indent == 0:
			indent = int(c - '0')
		default:
			continue
		}
		r.pos++
	}
	if r.pos < len(r.s) && r.s[r.pos] != ' ' && r.s[r.pos] != '\n' {
		return "", r.Bailf("unsupported block scalar header")
	}
	if err := r.finishLine(); err != nil {
		return "", err
	}
	ind := 0
	if indent > 0 {
		ind = max(r.ind, 0) + indent
	} else {
		// The first line's indentation; leading empty lines are left to
		// yaml.v2.
		i := r.pos
		for i < len(r.s) && r.s[i] == ' ' {
			i++
		}
		if i == len(r.s) || r.s[i] == '\n' {
			return "", r.Bailf("a block scalar that starts with an empty line")
		}
		ind = i - r.lineStart
		if ind <= r.ind {
			return "", r.Bailf("an empty block scalar")
		}
	}
	var b strings.Builder
	breaks := 0 // pending line breaks
	content := false
	for r.pos < len(r.s) {
		i := r.pos
		for i < len(r.s) && r.s[i] == ' ' && i-r.lineStart < ind {
			i++
		}
		end := r.lineEnd(i)
		if i-r.lineStart < ind {
			if i == end {
				// An empty line.
				if content {
					breaks++
				} else {
					b.WriteByte('\n')
				}
				r.nextLine()
				continue
			}
			break // less indented content: the scalar has ended
		}
		if content {
			b.WriteByte('\n')
			for ; breaks > 0; breaks-- {
				b.WriteByte('\n')
			}
		}
		line := r.s[i:end]
		if line != "" && strings.TrimLeft(line, " ") == "" {
			return "", r.Bailf("a line of spaces inside a block scalar")
		}
		if line == "" {
			// An empty line at exactly the indentation.
			if content {
				breaks++
				r.nextLine()
				continue
			}
			b.WriteByte('\n')
			r.nextLine()
			continue
		}
		b.WriteString(line)
		content = true
		r.nextLine()
	}
	if r.pos == len(r.s) && !strings.HasSuffix(r.s, "\n") {
		return "", r.Bailf("a block scalar at the end of input without a line break")
	}
	if !content {
		return "", r.Bailf("a block scalar without content")
	}
	switch chomp {
	case '-':
	case '+':
		b.WriteByte('\n')
		for ; breaks > 0; breaks-- {
			b.WriteByte('\n')
		}
	default:
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// Typed scalar readers. Anything sigs.k8s.io/yaml would coerce (a plain
// scalar that resolves to a number where a string belongs, "yes" for a
// boolean) is left to the slow path.

// ReadString reads a scalar as a string: "" for null, a *Bail for a plain
// scalar that YAML resolves to anything but a string. field names it in
// the error.
func (r *Reader) ReadString(field string) (string, error) {
	sc, err := r.ReadScalar()
	if err != nil {
		return "", err
	}
	if sc.plain {
		switch ResolvePlain(sc.v) {
		case PlainStr:
		case PlainNull:
			return "", nil
		default:
			return "", &Bail{Line: sc.line, Msg: fmt.Sprintf("%s: %q is not a YAML string; quote it", field, sc.v)}
		}
	}
	return sc.v, nil
}

// ReadInt reads a plain decimal integer of at most 9 digits (0 for null);
// anything else is a *Bail naming field.
func (r *Reader) ReadInt(field string) (int, error) {
	sc, err := r.ReadScalar()
	if err != nil {
		return 0, err
	}
	if sc.plain && ResolvePlain(sc.v) == PlainNull {
		return 0, nil
	}
	s := sc.v
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if !sc.plain || s == "" || len(s) > 9 || s[0] == '0' && len(s) > 1 {
		return 0, &Bail{Line: sc.line, Msg: fmt.Sprintf("%s: %q is not an integer", field, sc.v)}
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, &Bail{Line: sc.line, Msg: fmt.Sprintf("%s: %q is not an integer", field, sc.v)}
		}
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// ReadBool reads a plain true or false (false for null); anything else is
// a *Bail naming field.
func (r *Reader) ReadBool(field string) (bool, error) {
	sc, err := r.ReadScalar()
	if err != nil {
		return false, err
	}
	if sc.plain {
		switch sc.v {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		if ResolvePlain(sc.v) == PlainNull {
			return false, nil
		}
	}
	return false, &Bail{Line: sc.line, Msg: fmt.Sprintf("%s: %q is not true or false", field, sc.v)}
}

// ReadStringMap reads a mapping of strings.
func (r *Reader) ReadStringMap(field string) (map[string]string, error) {
	out := map[string]string{}
	present, err := r.ReadMap(func(key string) error {
		v, err := r.ReadString(field + "." + key)
		out[key] = v
		return err
	})
	if !present {
		out = nil
	}
	return out, err
}

// SkipValue reads and drops the value after a key (a field the typed
// decoder does not know), nested to any depth: a block mapping or
// sequence, an empty flow collection or a scalar. A value in what the
// reader does not handle anywhere else (flow collections, folded or
// multi-line scalars, tags, …) is taken whole by its indentation — the
// lines after the key's that are more indented than the key, or sequence
// entries at its column — and checked on its own as the slow path checks
// a document (CheckPlain, NoDuplicateKeys, sigs.k8s.io/yaml). That part,
// not the document, must be at most MaxSlow bytes: a field kbuild does
// not know does not make a large document unreadable.
func (r *Reader) SkipValue() error {
	saved := *r
	err := r.skipValue()
	if err == nil || !isBail(err) {
		return err
	}
	*r = saved
	return r.skipChecked()
}

// isBail reports whether err is a *Bail. (A function of its own, so that
// SkipValue does not allocate when it succeeds.)
func isBail(err error) bool {
	var bail *Bail
	return errors.As(err, &bail)
}

// skipChecked is SkipValue's check of a value on its own, pos being after
// its key's ':'.
func (r *Reader) skipChecked() error {
	last := r.lineEnd(r.pos) // end of the last line of the value
	lines := 0               // lines of the value after the key's
	n := 0
	for off := last + 1; off < len(r.s); {
		eol := r.FindEOL(off)
		n++
		i := off
		for i < eol && r.s[i] == ' ' {
			i++
		}
		switch col := i - off; {
		case i == eol || r.s[i] == '#': // blank or comment: the value's if more follows
		case col > r.ind, col == r.ind && r.seqOK && r.isDash(i):
			last, lines = eol, n
		default:
			off = len(r.s)
			continue
		}
		off = eol + 1
	}
	part := r.s[r.lineStart:last]
	if len(part) > MaxSlow {
		return r.Bailf("the value of a field kbuild does not know is %d bytes, more than the %d MiB read on the slow path", len(part), MaxSlow>>20)
	}
	b := []byte(part + "\n")
	what := fmt.Sprintf("line %d", r.line)
	if err := CheckPlain(b, what); err != nil {
		return &Bail{Line: r.line, Msg: err.Error()}
	}
	var node yaml3.Node
	if err := yaml3.Unmarshal(b, &node); err != nil {
		return &Bail{Line: r.line, Msg: err.Error()}
	}
	if err := NoDuplicateKeys(&node, "the value", r.line); err != nil {
		return &Bail{Line: r.line, Msg: err.Error()}
	}
	var v any
	if err := DecodeLoose(b, &v); err != nil {
		return &Bail{Line: r.line, Msg: err.Error()}
	}
	if last < len(r.s) {
		last++
	}
	r.Seek(last, r.line+lines+1)
	return nil
}

// skipValue reads and drops the value after a key: a block mapping or
// sequence, an empty flow collection or a scalar, nested to any depth.
// It gives up on what the reader does not handle anywhere else.
func (r *Reader) skipValue() error {
	skipKey := func(string) error { return r.skipValue() }
	if r.AtLineEnd() {
		// A block mapping or sequence on the next lines, or null.
		saved := *r
		r.nextLine()
		c, err := r.nextContent()
		if err != nil {
			return err
		}
		seq := c >= 0 && (c > saved.ind || c == saved.ind && saved.seqOK) && r.isDash(r.pos)
		*r = saved
		if seq {
			_, err = r.ReadSeq(r.skipValue)
		} else {
			_, err = r.ReadMap(skipKey)
		}
		return err
	}
	r.skipSpaces()
	switch rest := r.lineRest(r.pos); {
	case rest == "{}":
		_, err := r.ReadMap(skipKey)
		return err
	case rest == "[]":
		_, err := r.ReadSeq(r.skipValue)
		return err
	case r.isDash(r.pos) && r.dash:
		// A sequence that starts on the entry's line ("- - a").
		ind, seqOK := r.ind, r.seqOK
		err := r.SeqLoop(r.col(), r.skipValue)
		r.ind, r.dash, r.seqOK = ind, true, seqOK
		return err
	case r.dash:
		// A mapping that starts on the entry's line, or a scalar.
		saved := *r
		_, err := r.ReadKey()
		*r = saved
		if err == nil {
			_, err = r.ReadMap(skipKey)
			return err
		}
	}
	_, err := r.ReadScalar()
	return err
}

// ReadTime reads an RFC 3339 time; null is the zero time.
func (r *Reader) ReadTime(field string) (time.Time, error) {
	var t time.Time
	sc, err := r.ReadScalar()
	if err != nil {
		return t, err
	}
	if sc.plain {
		switch ResolvePlain(sc.v) {
		case PlainNull:
			return t, nil
		case PlainStr:
		default:
			return t, &Bail{Line: sc.line, Msg: fmt.Sprintf("%s: %q is not a YAML string; quote it", field, sc.v)}
		}
	}
	if err := t.UnmarshalText([]byte(sc.v)); err != nil {
		return t, &Bail{Line: sc.line, Msg: fmt.Sprintf("%s: %v", field, err)}
	}
	return t, nil
}

// PanicError is a panic of a reader (or of what a typed decoder does
// while it reads) turned into an error: a bug, reported with where the
// reader was, instead of a crash of the whole process.
type PanicError struct {
	// Line is the reader's line when it panicked (0 if unknown).
	Line  int
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	where := ""
	if e.Line > 0 {
		where = fmt.Sprintf("line %d: ", e.Line)
	}
	return fmt.Sprintf("%sinternal error while reading or writing YAML (%v); this is a bug in kbuild: please report it with the file", where, e.Value)
}

// Recover turns a panic into a *PanicError in *err naming r's line; r may
// be nil. Defer it directly: defer yamlscan.Recover(&err, r).
func Recover(err *error, r *Reader) {
	v := recover()
	if v == nil {
		return
	}
	line := 0
	if r != nil {
		line = r.line
	}
	*err = &PanicError{Line: line, Value: v, Stack: debug.Stack()}
}

// TestHook is nil outside tests. A test sets it to be called with each
// package's name as an index is read or written, from the goroutine doing it: tests (of index
// and of trust, which reads indexes through it) make it panic to check
// that a panic there is an error.
var TestHook func(name string)
