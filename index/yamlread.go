package index

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// yreader decodes the block-style YAML that go.yaml.in/yaml/v2 writes
// (block mappings and sequences, plain, quoted and literal scalars, empty
// flow collections) straight into Go values, fast enough for an index of
// 100,000 versions. Typed decoders drive it: readMap, readSeq and the scalar
// readers each read the value that follows a "key:" or "-" indicator.
//
// It does not implement YAML. Whenever the input uses anything else (flow
// collections, anchors and aliases, tags, folded scalars, tabs, several
// documents, keys or values the typed decoder does not know, plain scalars
// that YAML 1.1 reads as booleans or numbers) it stops with a *yamlBail, and
// the caller decodes the document with sigs.k8s.io/yaml instead, which is
// authoritative. On what it accepts it must agree with sigs.k8s.io/yaml
// exactly; FuzzParseIndex checks that. Reading an index it is lenient as
// kubepkg's client is: unknown keys are skipped and recorded (see unknown),
// agreeing with readLenient, which FuzzParseIndex checks too.
type yreader struct {
	s         string
	pos       int  // next unread byte
	lineStart int  // offset of the line pos is on
	eol       int  // offset of the '\n' ending that line, or len(s)
	line      int  // 1-based line of pos
	ind       int  // column of the indicator ("key" or "-") whose value is next
	dash      bool // the indicator was "-": a mapping may start on its line
	seqOK     bool // a sequence may start at column ind (mapping values)
	slab      *slabs

	// lenient is set when reading an index: a key the typed decoder does
	// not know is skipped (skipValue) rather than a reason to give up, as
	// kubepkg's client ignores it. found lists the fields skipped outside
	// versions; skipped counts every field skipped, so that readVersions
	// can tell which versions had one (see lenientTypes).
	lenient bool
	found   []UnknownField
	skipped int
}

// yamlBail reports where and why the fast reader gave up.
type yamlBail struct {
	line int
	msg  string
	// refused is set when sigs.k8s.io/yaml, and so kubepkg's client,
	// refuses the document too: no need to read it again.
	refused bool
}

func (e *yamlBail) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

func (r *yreader) bail(format string, args ...any) error {
	return &yamlBail{line: r.line, msg: fmt.Sprintf(format, args...)}
}

// newYReader checks that b holds only characters the fast reader handles
// and positions a reader of a copy of b before the document's root mapping.
func newYReader(b []byte) (*yreader, error) { return newYReaderOf(b, false, nil) }

// newYReaderOf is newYReader; with share, the reader and the strings it
// returns use b itself, which must then never be modified. Values come
// from slab, or new slabs when nil.
func newYReaderOf(b []byte, share bool, slab *slabs) (*yreader, error) {
	if err := checkChars(b); err != nil {
		return nil, err
	}
	var s string
	if share && len(b) > 0 {
		s = unsafe.String(&b[0], len(b))
	} else {
		s = string(b)
	}
	if slab == nil {
		slab = &slabs{}
	}
	r := &yreader{s: s, line: 1, ind: -1, seqOK: false, slab: slab}
	r.eol = r.findEOL(0)
	// An optional "---" start marker, alone on its line.
	if strings.HasPrefix(s, "---") && (len(s) == 3 || s[3] == '\n' || s[3] == ' ') {
		rest := r.lineRest(3)
		if rest != "" {
			return nil, r.bail("content after the document marker")
		}
		r.nextLine()
	}
	return r, nil
}

// checkChars refuses input the fast reader does not handle: invalid UTF-8,
// control characters (tabs and carriage returns included), a byte-order
// mark, and the YAML 1.1 line breaks NEL, LS and PS. Large input is checked
// in parallel parts, split before ASCII bytes.
func checkChars(s []byte) error {
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
	return parallel(len(cuts)-1, func(i int) error { return checkCharsFrom(s, cuts[i], cuts[i+1]) })
}

// checkCharsFrom is checkChars of s[from:to].
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
				return &yamlBail{line: lineAt(i), msg: fmt.Sprintf("control character %#02x", c)}
			}
			i++
			continue
		}
		ru, n := utf8.DecodeRune(s[i:to])
		switch {
		case ru == utf8.RuneError && n == 1:
			return &yamlBail{line: lineAt(i), msg: "invalid UTF-8"}
		case ru < 0xa0, ru == 0x2028, ru == 0x2029, ru == 0xfeff, ru == 0xfffe, ru == 0xffff:
			return &yamlBail{line: lineAt(i), msg: fmt.Sprintf("character %U", ru)}
		}
		i += n
	}
	return nil
}

// lineEnd returns the offset of the '\n' ending the line containing i, or
// len(s).
func (r *yreader) lineEnd(i int) int {
	if i >= r.lineStart && i <= r.eol {
		return r.eol
	}
	return r.findEOL(i)
}

func (r *yreader) findEOL(i int) int {
	if j := strings.IndexByte(r.s[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(r.s)
}

// lineRest returns what follows offset i on its line, without trailing
// spaces and a comment ("#" after a space or at i).
func (r *yreader) lineRest(i int) string {
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
func (r *yreader) nextLine() {
	end := r.lineEnd(r.pos)
	if end < len(r.s) {
		r.pos = end + 1
		r.line++
	} else {
		r.pos = end
	}
	r.lineStart = r.pos
	r.eol = r.findEOL(r.pos)
}

// nextContent moves pos (at a line start) to the first non-space byte of
// the next line that is neither blank nor a comment and returns its column,
// or -1 at the end of input. A document marker ends the input for the fast
// reader.
func (r *yreader) nextContent() (int, error) {
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
				return 0, r.bail("a second YAML document or a document end marker")
			}
		}
		r.pos = i
		return i - r.lineStart, nil
	}
	return -1, nil
}

// col is the column of pos.
func (r *yreader) col() int { return r.pos - r.lineStart }

// skipSpaces moves pos over spaces on the current line.
func (r *yreader) skipSpaces() {
	for r.pos < len(r.s) && r.s[r.pos] == ' ' {
		r.pos++
	}
}

// atLineEnd reports whether only spaces and a comment remain on the line.
func (r *yreader) atLineEnd() bool {
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
func (r *yreader) finishLine() error {
	if !r.atLineEnd() {
		return r.bail("unexpected %q after a value", strings.TrimSpace(r.s[r.pos:r.lineEnd(r.pos)]))
	}
	r.nextLine()
	return nil
}

// isDash reports whether a block sequence entry starts at i.
func (r *yreader) isDash(i int) bool {
	return i < len(r.s) && r.s[i] == '-' && (i+1 == len(r.s) || r.s[i+1] == ' ' || r.s[i+1] == '\n')
}

// readRoot reads the document's root mapping, calling fn with each key.
func (r *yreader) readRoot(fn func(key string) error) error {
	c, err := r.nextContent()
	if err != nil || c < 0 {
		return err
	}
	if c != 0 {
		return r.bail("the document does not start at column 0")
	}
	c, err = r.mapLoop(0, fn)
	if err != nil {
		return err
	}
	if c >= 0 {
		return r.bail("content after the document's root mapping")
	}
	return nil
}

// readMap reads a mapping value, calling fn with each key; fn must read the
// key's value. It reports whether a mapping was present (false for null).
func (r *yreader) readMap(fn func(key string) error) (bool, error) {
	ind, dash, seqOK := r.ind, r.dash, r.seqOK
	defer func() { r.ind, r.dash, r.seqOK = ind, dash, seqOK }()
	r.skipSpaces()
	var col int
	if r.atLineEnd() {
		r.nextLine()
		c, err := r.nextContent()
		if err != nil {
			return false, err
		}
		if c <= ind {
			if c == ind && seqOK && r.isDash(r.pos) {
				return false, r.bail("a sequence where a mapping belongs")
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
			return false, r.bail("a mapping where %q is", rest)
		}
		col = r.col()
	}
	_, err := r.mapLoop(col, fn)
	return err == nil, err
}

// mapLoop reads the keys of a block mapping at column col, pos being at the
// first key, and returns the column of the line after it (-1 at the end).
func (r *yreader) mapLoop(col int, fn func(key string) error) (int, error) {
	var seenArr [12]string
	seen := seenArr[:0]
	var seenSet map[string]bool
	for {
		if r.isDash(r.pos) {
			return 0, r.bail("a sequence entry where a mapping key belongs")
		}
		key, err := r.readKey()
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
			return 0, r.bail("duplicate key %q", key)
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
			return 0, r.bail("unexpected indentation")
		}
	}
}

// readKey reads a simple mapping key and the ':' after it.
func (r *yreader) readKey() (string, error) {
	var key string
	switch c := r.s[r.pos]; c {
	case '"', '\'':
		v, err := r.quoted(false)
		if err != nil {
			return "", err
		}
		key = v
		if r.pos >= len(r.s) || r.s[r.pos] != ':' {
			return "", r.bail("expected ':' after key %q", key)
		}
	case '?', '&', '*', '!', '|', '>', '%', '@', '`', '[', ']', '{', '}', ',', '#', ':':
		return "", r.bail("unsupported key syntax %q", c)
	default:
		end := r.lineEnd(r.pos)
		i := r.pos
		for ; i < end; i++ {
			if r.s[i] == ':' && (i+1 == end || r.s[i+1] == ' ') {
				break
			}
			if r.s[i] == '#' && r.s[i-1] == ' ' {
				return "", r.bail("expected a mapping key")
			}
		}
		if i == end {
			return "", r.bail("expected a mapping key")
		}
		key = strings.TrimRight(r.s[r.pos:i], " ")
		if resolvePlain(key) != plainStr || key == "<<" {
			return "", r.bail("key %q is not a plain string", key)
		}
		r.pos = i
	}
	if len(key) > 1000 {
		return "", r.bail("key too long")
	}
	r.pos++ // ':'
	if r.pos < len(r.s) && r.s[r.pos] != ' ' && r.s[r.pos] != '\n' {
		return "", r.bail("expected a space after ':'")
	}
	return key, nil
}

// readSeq reads a sequence value, calling fn for each entry; fn must read
// the entry. It reports whether a sequence was present (false for null).
func (r *yreader) readSeq(fn func() error) (bool, error) {
	ind, dash, seqOK := r.ind, r.dash, r.seqOK
	defer func() { r.ind, r.dash, r.seqOK = ind, dash, seqOK }()
	r.skipSpaces()
	if !r.atLineEnd() {
		switch rest := r.lineRest(r.pos); rest {
		case "[]":
			r.pos += 2
			return true, r.finishLine()
		case "null", "~", "Null", "NULL":
			r.pos += len(rest)
			return false, r.finishLine()
		default:
			return false, r.bail("a sequence where %q is", rest)
		}
	}
	r.nextLine()
	col, err := r.nextContent()
	if err != nil {
		return false, err
	}
	if col < ind || col == ind && !seqOK || !r.isDash(r.pos) {
		if col > ind {
			return false, r.bail("a mapping or scalar where a sequence belongs")
		}
		return false, nil
	}
	return true, r.seqLoop(col, fn)
}

// seqLoop reads the entries of a block sequence at column col, pos being
// at the first "-".
func (r *yreader) seqLoop(col int, fn func() error) error {
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
				return r.bail("unexpected indentation")
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

// readScalar reads a scalar value and moves to the next line.
func (r *yreader) readScalar() (scalar, error) {
	r.skipSpaces()
	line := r.line
	if r.atLineEnd() {
		// Null, unless a more indented line follows (a scalar on its own
		// line, which the writer never produces).
		r.nextLine()
		c, err := r.nextContent()
		if err != nil {
			return scalar{}, err
		}
		if c > r.ind || c == r.ind && r.seqOK && r.isDash(r.pos) {
			return scalar{}, r.bail("a value on the line after its key")
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
		return scalar{}, r.bail("unsupported value syntax %q", c)
	case '-', '?', ':':
		if r.pos+1 == len(r.s) || r.s[r.pos+1] == ' ' || r.s[r.pos+1] == '\n' {
			return scalar{}, r.bail("unsupported value syntax %q", c)
		}
	}
	v, err := r.plain()
	return scalar{v: v, plain: true, line: line}, err
}

// plain reads a plain scalar, which may continue on more indented lines.
func (r *yreader) plain() (string, error) {
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
			return "", r.bail("a blank or comment line inside a multi-line plain scalar")
		}
		if commented {
			return "", r.bail("a comment inside a multi-line plain scalar")
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
			return "", r.bail("a comment after a multi-line plain scalar")
		}
		return b.String(), nil
	}
	return first, nil
}

// plainLine reads the part of a plain scalar on the line from i: up to a
// comment or the end, trailing spaces dropped. ": " inside is refused.
func (r *yreader) plainLine(i int) (val string, commented bool, err error) {
	end := r.lineEnd(i)
	for j := i; j < end; j++ {
		switch r.s[j] {
		case ':':
			if j+1 == end || r.s[j+1] == ' ' {
				return "", false, r.bail("\": \" inside a plain scalar")
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
func (r *yreader) quoted(multi bool) (string, error) {
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
			return "", r.bail("unterminated quoted scalar")
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
				return "", r.bail("unterminated quoted scalar")
			}
			if !multi {
				return "", r.bail("a multi-line quoted key")
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
func (r *yreader) fold(b *strings.Builder, j int) (int, error) {
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
			return 0, r.bail("a quoted scalar continued at too small an indentation")
		}
		if k == r.lineStart && (strings.HasPrefix(r.s[k:], "---") || strings.HasPrefix(r.s[k:], "...")) {
			return 0, r.bail("a document marker inside a quoted scalar")
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
func (r *yreader) escape(b *strings.Builder, i int) (int, error) {
	if i+1 >= len(r.s) {
		return 0, r.bail("unterminated escape")
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
		return 0, r.bail("unsupported escape \\%c", c)
	}
	if i+2+n > len(r.s) {
		return 0, r.bail("short escape")
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
			return 0, r.bail("bad hex escape")
		}
		v = v<<4 | rune(d)
	}
	if v >= 0xd800 && v <= 0xdfff || v > 0x10ffff {
		return 0, r.bail("invalid escaped character")
	}
	b.WriteRune(v)
	return 2 + n, nil
}

// literal reads a literal block scalar ("|", with optional chomping and
// indentation indicators) starting at pos.
func (r *yreader) literal() (string, error) {
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
		return "", r.bail("unsupported block scalar header")
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
			return "", r.bail("a block scalar that starts with an empty line")
		}
		ind = i - r.lineStart
		if ind <= r.ind {
			return "", r.bail("an empty block scalar")
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
			return "", r.bail("a line of spaces inside a block scalar")
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
		return "", r.bail("a block scalar at the end of input without a line break")
	}
	if !content {
		return "", r.bail("a block scalar without content")
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

func (r *yreader) readString(field string) (string, error) {
	sc, err := r.readScalar()
	if err != nil {
		return "", err
	}
	if sc.plain {
		switch resolvePlain(sc.v) {
		case plainStr:
		case plainNull:
			return "", nil
		default:
			return "", &yamlBail{line: sc.line, msg: fmt.Sprintf("%s: %q is not a YAML string; quote it", field, sc.v)}
		}
	}
	return sc.v, nil
}

func (r *yreader) readInt(field string) (int, error) {
	sc, err := r.readScalar()
	if err != nil {
		return 0, err
	}
	if sc.plain && resolvePlain(sc.v) == plainNull {
		return 0, nil
	}
	s := sc.v
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if !sc.plain || s == "" || len(s) > 9 || s[0] == '0' && len(s) > 1 {
		return 0, &yamlBail{line: sc.line, msg: fmt.Sprintf("%s: %q is not an integer", field, sc.v)}
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, &yamlBail{line: sc.line, msg: fmt.Sprintf("%s: %q is not an integer", field, sc.v)}
		}
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

func (r *yreader) readBool(field string) (bool, error) {
	sc, err := r.readScalar()
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
		if resolvePlain(sc.v) == plainNull {
			return false, nil
		}
	}
	return false, &yamlBail{line: sc.line, msg: fmt.Sprintf("%s: %q is not true or false", field, sc.v)}
}

// readStrings reads a sequence of strings. A present empty sequence is an
// empty, non-nil slice, as encoding/json makes it.
func (r *yreader) readStrings(field string) ([]string, error) {
	out := r.slab.strs.tmp[:0]
	present, err := r.readSeq(func() error {
		s, err := r.readString(field)
		out = append(out, s)
		return err
	})
	r.slab.strs.tmp = out[:0]
	if !present {
		return nil, err
	}
	list := take(&r.slab.strs, len(out))
	copy(list, out)
	return list, err
}

// readStringMap reads a mapping of strings.
func (r *yreader) readStringMap(field string) (map[string]string, error) {
	out := map[string]string{}
	present, err := r.readMap(func(key string) error {
		v, err := r.readString(field + "." + key)
		out[key] = v
		return err
	})
	if !present {
		out = nil
	}
	return out, err
}

// unknown handles a key a typed decoder does not know, in a value of kind
// where ("spec", "package NAME", ...). Strictly it is a reason to give up;
// reading an index leniently it skips the key's value and records it, but
// still gives up on a key that differs from a known one only in letter case
// (encoding/json, and so kubepkg, would decode it into that field) and on
// unknown keys where kubepkg's types have nothing to ignore them.
func (r *yreader) unknown(where, key string) error {
	t, ok := lenientTypes[where]
	pkg, isPkg := strings.CutPrefix(where, "package ")
	if isPkg {
		t, ok = reflect.TypeFor[IndexPackage](), true
	}
	if !r.lenient || !ok {
		return r.bail("unknown field %q in %s", key, where)
	}
	if _, folds := jsonField(t, key); folds {
		return r.bail("field %q in %s differs from a known field only in letter case", key, where)
	}
	if err := r.skipValue(); err != nil {
		return err
	}
	r.skipped++
	switch {
	case where == "index":
		r.found = append(r.found, UnknownField{Path: key})
	case isPkg:
		r.found = append(r.found, UnknownField{Package: pkg, Path: key})
	}
	// Inside a version readVersions names the field with its full path.
	return nil
}

// lenientTypes are the values of an index, by the where of unknown, in
// which an unknown key is skipped when reading leniently.
var lenientTypes = map[string]reflect.Type{
	"index":            reflect.TypeFor[RepositoryIndex](),
	"version":          reflect.TypeFor[IndexVersion](),
	"signature":        reflect.TypeFor[Signature](),
	"spec":             reflect.TypeFor[PackageSpec](),
	"rollback":         reflect.TypeFor[Rollback](),
	"sourceRef":        reflect.TypeFor[SourceRef](),
	"permissions":      reflect.TypeFor[Permissions](),
	"rule":             reflect.TypeFor[PolicyRule](),
	"variant":          reflect.TypeFor[Variant](),
	"requirement":      reflect.TypeFor[Requirement](),
	"library":          reflect.TypeFor[Library](),
	"component":        reflect.TypeFor[Component](),
	"chart":            reflect.TypeFor[ChartRef](),
	"install":          reflect.TypeFor[Install](),
	"healthCheckExprs": reflect.TypeFor[HealthCheck](),
	"readyWhen":        reflect.TypeFor[ReadyWhen](),
}

// skipValue reads and drops the value after a key: a block mapping or
// sequence, an empty flow collection or a scalar, nested to any depth.
// It gives up on what the reader does not handle anywhere else.
func (r *yreader) skipValue() error {
	skipKey := func(string) error { return r.skipValue() }
	if r.atLineEnd() {
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
			_, err = r.readSeq(r.skipValue)
		} else {
			_, err = r.readMap(skipKey)
		}
		return err
	}
	r.skipSpaces()
	switch rest := r.lineRest(r.pos); {
	case rest == "{}":
		_, err := r.readMap(skipKey)
		return err
	case rest == "[]":
		_, err := r.readSeq(r.skipValue)
		return err
	case r.isDash(r.pos) && r.dash:
		// A sequence that starts on the entry's line ("- - a").
		ind, seqOK := r.ind, r.seqOK
		err := r.seqLoop(r.col(), r.skipValue)
		r.ind, r.dash, r.seqOK = ind, true, seqOK
		return err
	case r.dash:
		// A mapping that starts on the entry's line, or a scalar.
		saved := *r
		_, err := r.readKey()
		*r = saved
		if err == nil {
			_, err = r.readMap(skipKey)
			return err
		}
	}
	_, err := r.readScalar()
	return err
}
