package render

import "strings"

// splitManifests splits a rendered stream into its documents exactly as
// Helm's releaseutil.SplitManifests does before installing (and in the same
// order), without its regular expression, which took a tenth of a build's
// time: the stream is trimmed, a separator is "---" at the start or after a
// newline together with the ASCII whitespace that follows it, a piece
// that is empty before trimming is dropped, and each other piece is
// trimmed. FuzzSplitManifests checks it against Helm's.
func splitManifests(s string) []string {
	s = strings.TrimSpace(s)
	var docs []string
	add := func(d string) {
		if d != "" {
			docs = append(docs, strings.TrimSpace(d))
		}
	}
	beg := 0
	if strings.HasPrefix(s, "---") {
		beg = skipSpace(s, 3)
	}
	for from := beg; ; {
		i := strings.Index(s[from:], "\n---")
		if i < 0 {
			break
		}
		cut := from + i
		add(s[beg:cut])
		beg = skipSpace(s, cut+len("\n---"))
		from = beg
	}
	add(s[beg:])
	return docs
}

// skipSpace returns the index of the first byte of s at or after i that
// is not ASCII whitespace (the \s of Go's regular expressions).
func skipSpace(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\f', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
