package yamlscan

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// This file holds the scalar rules of YAML 1.1 as go.yaml.in/yaml/v2 (and so
// sigs.k8s.io/yaml) applies them: which plain scalars are strings, which
// style a string is written in, and the order of mapping keys. The fast
// reader and writer (read.go, write.go) depend on them matching the
// library exactly; index's yaml_test.go and fuzz tests compare both.

// PlainKind is what a plain (unquoted) scalar resolves to.
type PlainKind uint8

// The kinds a plain scalar resolves to, as yaml.v2 resolves them.
const (
	PlainStr PlainKind = iota
	PlainNull
	PlainBool
	PlainInt
	PlainFloat
	PlainTimestamp
)

// yaml11Words are the plain scalars that resolve to something other than a
// string by table lookup.
var yaml11Words = map[string]PlainKind{
	"y": PlainBool, "Y": PlainBool, "yes": PlainBool, "Yes": PlainBool, "YES": PlainBool,
	"n": PlainBool, "N": PlainBool, "no": PlainBool, "No": PlainBool, "NO": PlainBool,
	"true": PlainBool, "True": PlainBool, "TRUE": PlainBool,
	"false": PlainBool, "False": PlainBool, "FALSE": PlainBool,
	"on": PlainBool, "On": PlainBool, "ON": PlainBool,
	"off": PlainBool, "Off": PlainBool, "OFF": PlainBool,
	"": PlainNull, "~": PlainNull, "null": PlainNull, "Null": PlainNull, "NULL": PlainNull,
	".nan": PlainFloat, ".NaN": PlainFloat, ".NAN": PlainFloat,
	".inf": PlainFloat, ".Inf": PlainFloat, ".INF": PlainFloat,
	"+.inf": PlainFloat, "+.Inf": PlainFloat, "+.INF": PlainFloat,
	"-.inf": PlainFloat, "-.Inf": PlainFloat, "-.INF": PlainFloat,
}

// ResolvePlain returns what the plain scalar s resolves to.
func ResolvePlain(s string) PlainKind {
	if s == "" {
		return PlainNull
	}
	c := s[0]
	var hint byte
	switch {
	case c == '+' || c == '-':
		hint = 'S'
	case c >= '0' && c <= '9':
		hint = 'D'
	case c == '.':
		hint = '.'
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		hint = 'M'
	default:
		return PlainStr
	}
	if k, ok := yaml11Words[s]; ok {
		return k
	}
	switch hint {
	case 'M':
		return PlainStr
	case '.':
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return PlainFloat
		}
		return PlainStr
	}
	if isTimestamp(s) {
		return PlainTimestamp
	}
	// Only try the number parsers on what could be a number: they
	// allocate an error on failure, and versions like 1.9.0 fail.
	intChars, floatChars := true, true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '_', c == '+', c == '-':
		case c == 'x' || c == 'X' || c == 'o' || c == 'O' || c == 'b' || c == 'B' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			floatChars = floatChars && (c == 'e' || c == 'E')
		case c == '.':
			intChars = false
		default:
			return PlainStr
		}
	}
	p := strings.ReplaceAll(s, "_", "")
	if intChars {
		if _, err := strconv.ParseInt(p, 0, 64); err == nil {
			return PlainInt
		}
		if _, err := strconv.ParseUint(p, 0, 64); err == nil {
			return PlainInt
		}
	}
	if floatChars && isYAMLFloat(p) {
		if _, err := strconv.ParseFloat(p, 64); err == nil {
			return PlainFloat
		}
	}
	if intChars {
		switch {
		case strings.HasPrefix(p, "0b"):
			if _, err := strconv.ParseInt(p[2:], 2, 64); err == nil {
				return PlainInt
			}
			if _, err := strconv.ParseUint(p[2:], 2, 64); err == nil {
				return PlainInt
			}
		case strings.HasPrefix(p, "-0b"):
			if _, err := strconv.ParseInt("-"+p[3:], 2, 64); err == nil {
				return PlainInt
			}
		}
	}
	return PlainStr
}

// isYAMLFloat reports whether s matches [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
func isYAMLFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

var timestampLayouts = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// isTimestamp reports whether the plain scalar s is a YAML timestamp.
func isTimestamp(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, l := range timestampLayouts {
		if _, err := time.Parse(l, s); err == nil {
			return true
		}
	}
	return false
}

var base60Float = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)

// isBase60 reports whether s looks like a YAML 1.1 sexagesimal number,
// which the writer quotes although the reader takes it as a string.
func isBase60(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if !(c == '+' || c == '-' || c >= '0' && c <= '9') || strings.IndexByte(s, ':') < 0 {
		return false
	}
	return base60Float.MatchString(s)
}

// scalarStyle is how the writer writes a string.
type scalarStyle uint8

const (
	stylePlain scalarStyle = iota
	styleSingle
	styleDouble
	styleUnsupported // not printable ASCII on one line: leave it to yaml.v2
)

// chooseStyle returns the style yaml.v2 writes the string s in, as a
// mapping key or a block value alike; styleUnsupported unless s is
// printable ASCII.
func chooseStyle(s string) scalarStyle {
	if s == "" {
		return styleDouble // "" resolves to null, key or value
	}
	// One pass for what the emitter's analysis looks at: printable ASCII,
	// indicators, and spaces at the ends.
	plainOK := s[0] != ' ' && s[len(s)-1] != ' '
	switch s[0] {
	case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		plainOK = false
	case '?', ':', '-':
		if len(s) == 1 || s[1] == ' ' {
			plainOK = false
		}
	}
	if len(s) >= 3 && (s[:3] == "---" || s[:3] == "...") {
		plainOK = false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			return styleUnsupported
		}
		switch {
		case i == 0:
		case c == ':':
			if i+1 == len(s) || s[i+1] == ' ' {
				plainOK = false
			}
		case c == '#':
			if s[i-1] == ' ' {
				plainOK = false
			}
		}
	}
	if ResolvePlain(s) != PlainStr || isBase60(s) {
		return styleDouble
	}
	if !plainOK {
		return styleSingle
	}
	return stylePlain
}

// KeyLess orders mapping keys as yaml.v2 does: letters after other
// characters, and runs of digits by their numeric value.
func KeyLess(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			continue
		}
		al, bl := unicode.IsLetter(ar[i]), unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			return bl
		}
		// Compare the numbers that start here; a run that has a nonzero
		// digit before it is not a leading-zero run.
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		ai := i
		for ; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		bi := i
		for ; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}
