package hint

import (
	"errors"
	"fmt"
	"testing"
)

type inputError struct{ input, msg string }

func (e *inputError) Error() string     { return e.msg }
func (e *inputError) InputName() string { return e.input }

// TestApply: a hint after the message or inside it, an input said as its
// flag, each joined error with its own hint, other errors as they are.
func TestApply(t *testing.T) {
	errA, errB := errors.New("a is missing"), errors.New("b is off")
	tb := Table{
		Rules: []Rule{{Err: errA, Hint: "pass --a"}, {Err: errB, Hint: "turn it on", Inside: true}},
		Typed: func(err error) string {
			var ie *inputError
			if errors.As(err, &ie) {
				return "see --" + ie.input
			}
			return ""
		},
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("x: %w", errA), "x: a is missing; pass --a"},
		{fmt.Errorf("x: %w: cause", errB), "x: b is off; turn it on: cause"},
		{&inputError{"suite", "suite nightly is unknown"}, "--suite nightly is unknown; see --suite"},
		{fmt.Errorf("reading: %w", &inputError{"suite", "suite nightly is unknown"}), "reading: suite nightly is unknown; see --suite"},
		{fmt.Errorf("2 failed:\n%w", errors.Join(fmt.Errorf("y: %w", errA), errB)), "2 failed:\ny: a is missing; pass --a\nb is off; turn it on"},
		{errors.New("other"), "other"},
	} {
		got := tb.Apply(tc.err)
		if got.Error() != tc.want || !errors.Is(got, tc.err) {
			t.Errorf("Apply(%q) = %q, want %q wrapping the error", tc.err, got, tc.want)
		}
	}
	if tb.Apply(nil) != nil {
		t.Error("Apply(nil) != nil")
	}
}
