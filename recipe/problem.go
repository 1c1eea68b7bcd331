package recipe

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"kbuild.dev/kbuild/internal/fault"
)

// Severity says whether a Problem stops a build.
type Severity int

const (
	// Error stops validation and builds.
	Error Severity = iota
	// Warning is reported but does not fail.
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Problem is one finding about a recipe, located by field path and line.
type Problem struct {
	Severity Severity
	Field    string // e.g. "spec.sources.upstream.sha256"; may be empty
	Line     int    // 0 when unknown
	Message  string
	// Code classifies problems that callers treat specially; see
	// CodeUnpinnedImage.
	Code string
}

// CodeUnpinnedImage marks an image that is not pinned by digest. Pinning
// needs the registry, so `kbuild validate --offline` reports it as a
// warning; building and publishing treat it as an error.
const CodeUnpinnedImage = "unpinned-image"

func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Problems is a list of findings in the order they were found.
type Problems []Problem

func (ps *Problems) add(p Problem) { *ps = append(*ps, p) }

// Errors returns only the problems of severity Error.
func (ps Problems) Errors() Problems {
	var out Problems
	for _, p := range ps {
		if p.Severity == Error {
			out = append(out, p)
		}
	}
	return out
}

// OnlyUnpinned reports whether every error of ps is an image not pinned
// by digest (CodeUnpinnedImage), the one kind kbuild images --write fixes.
// It is true when ps has no errors.
func (ps Problems) OnlyUnpinned() bool {
	for _, p := range ps.Errors() {
		if p.Code != CodeUnpinnedImage {
			return false
		}
	}
	return true
}

// ProblemsError is returned when a recipe has errors; File names it.
type ProblemsError struct {
	File     string
	Problems Problems
}

// Fault says a recipe with problems is refused (fault.Refused).
func (e *ProblemsError) Fault() fault.Kind { return fault.Refused }

func (e *ProblemsError) Error() string {
	errs := e.Problems.Errors()
	if len(errs) == 0 {
		return e.File + ": no errors"
	}
	msg := e.File + ": " + errs[0].String()
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(errs)-1)
	}
	return msg
}

// maxQuoted bounds how much of a name or value from outside an error
// message repeats.
const maxQuoted = 120

// Quote quotes s for a message, cut to 120 bytes with its full length
// said, so that hostile input (a recipe, an archive, an index) cannot fill
// a log line.
func Quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:maxQuoted]) + fmt.Sprintf("… (%d bytes)", len(s))
}

// cut is s, or its first 120 bytes and its full length when it is longer:
// for text that holds outside input already quoted, such as a library's
// error or a suggested rewrite of a hostile value.
func cut(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	return strings.ToValidUTF8(s[:maxQuoted], "") + fmt.Sprintf("… (%d bytes)", len(s))
}

// maxListed bounds how many names a message lists.
const maxListed = 10

// quoteList lists names for a message, each quoted and cut by Quote, at
// most maxListed of them followed by how many more there are.
func quoteList(names []string) string {
	var b strings.Builder
	for i, n := range names {
		if i == maxListed {
			fmt.Fprintf(&b, " and %d more", len(names)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(Quote(n))
	}
	return b.String()
}

// WriteText writes the problem of file for a person, indented under the
// recipe's line, and with github also as a GitHub Actions workflow
// annotation, so that it shows on the pull request's file.
func (p Problem) WriteText(w io.Writer, file string, github bool) error {
	fmt.Fprintf(w, "  %s: %s\n", p.Severity, p)
	if !github {
		return nil
	}
	loc := "file=" + file
	if p.Line > 0 {
		loc += fmt.Sprintf(",line=%d", p.Line)
	}
	msg := p.Message
	if p.Field != "" {
		msg = p.Field + ": " + msg
	}
	msg = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(msg)
	_, err := fmt.Fprintf(w, "::%s %s::%s\n", p.Severity, loc, msg)
	return err
}
