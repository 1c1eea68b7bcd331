// Package hint adds what to do to an error at the edge of a program. A
// library's error names its input (a sentinel, a typed error) and never a
// flag or a command; the program's Table names them, once (cmd/kbuild's
// hints.go).
package hint

import (
	"errors"
	"fmt"
	"strings"
)

// Rule is one hint: Hint is said about an error that wraps Err, after its
// message, or, with Inside, right after Err's own words in it (where the
// library's message goes on with a cause).
type Rule struct {
	Err    error
	Hint   string
	Inside bool
}

// Named is an error about one input of a library call (publish's and
// evidence's InputError, …): InputName names it.
type Named interface {
	error
	InputName() string
}

// Table is a program's hints.
type Table struct {
	// Rules are tried in order; the first whose Err the error wraps wins.
	Rules []Rule
	// Typed returns the hint about an error that carries its data (no
	// Rule matched), or "".
	Typed func(error) string
}

// Apply returns err with its hint; an error about one input (a Named)
// whose message starts with the input's name ("suite nightly is not in
// …") as about its flag ("--suite nightly …"); each error of an
// errors.Join that ends the message with its own hint; other errors (and
// nil) as they are.
func (t *Table) Apply(err error) error {
	if err == nil {
		return nil
	}
	if prefix, errs, ok := joinedIn(err); ok {
		hinted := make([]error, len(errs))
		for i, e := range errs {
			hinted[i] = t.Apply(e)
		}
		if prefix == "" {
			return errors.Join(hinted...)
		}
		return &hintedError{err: err, msg: prefix + errors.Join(hinted...).Error()}
	}
	var in Named
	if errors.As(err, &in) && strings.HasPrefix(err.Error(), in.InputName()+" ") {
		err = fmt.Errorf("--%w", err)
	}
	for _, r := range t.Rules {
		if !errors.Is(err, r.Err) {
			continue
		}
		if msg, words := err.Error(), r.Err.Error(); r.Inside && strings.Contains(msg, words) {
			at := strings.Index(msg, words) + len(words)
			return &hintedError{err: err, msg: msg[:at] + "; " + r.Hint + msg[at:]}
		}
		return fmt.Errorf("%w; %s", err, r.Hint)
	}
	if t.Typed != nil {
		if h := t.Typed(err); h != "" {
			return fmt.Errorf("%w; %s", err, h)
		}
	}
	return err
}

// joinedIn finds an errors.Join in err's chain whose message ends err's
// ("3 of 3 sources failed:\n" and the sources' errors, one a line): it
// returns the words before it and the errors joined.
func joinedIn(err error) (string, []error, bool) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		j, ok := e.(interface{ Unwrap() []error })
		if !ok {
			continue
		}
		if errs := j.Unwrap(); isJoin(e, errs) && strings.HasSuffix(err.Error(), e.Error()) {
			return strings.TrimSuffix(err.Error(), e.Error()), errs, true
		}
		return "", nil, false
	}
	return "", nil, false
}

// isJoin reports whether err is errors.Join of errs: its message is
// theirs, one a line (fmt.Errorf with several %w is not).
func isJoin(err error, errs []error) bool {
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		if e != nil {
			msgs = append(msgs, e.Error())
		}
	}
	return len(msgs) > 1 && err.Error() == strings.Join(msgs, "\n")
}

// hintedError is an error whose message has hints inside; it wraps the
// error.
type hintedError struct {
	err error
	msg string
}

func (h *hintedError) Error() string { return h.msg }
func (h *hintedError) Unwrap() error { return h.err }
