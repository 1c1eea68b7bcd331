package fault

import (
	"errors"
	"fmt"
	"testing"
)

type verifyError struct{}

func (verifyError) Error() string { return "bad signature" }
func (verifyError) Fault() Kind   { return Verification }

func TestIs(t *testing.T) {
	refused := New(Refused, "unsafe input")
	unavailable := New(Unavailable, "server unavailable")
	for _, tc := range []struct {
		name string
		err  error
		kind Kind
		want bool
	}{
		{"nil", nil, Refused, false},
		{"plain", errors.New("x"), Refused, false},
		{"sentinel", refused, Refused, true},
		{"other kind", refused, Unavailable, false},
		{"wrapped", fmt.Errorf("a.tar: %w", refused), Refused, true},
		{"wrapped twice", fmt.Errorf("b: %w", fmt.Errorf("a: %w", unavailable)), Unavailable, true},
		{"joined, second", errors.Join(errors.New("x"), unavailable), Unavailable, true},
		{"two wrapped", fmt.Errorf("%w; %w", refused, unavailable), Unavailable, true},
		{"type", fmt.Errorf("index: %w", verifyError{}), Verification, true},
		{"type, other kind", verifyError{}, Refused, false},
		{"kind under a kind", fmt.Errorf("%w: %w", refused, verifyError{}), Verification, true},
	} {
		if got := Is(tc.err, tc.kind); got != tc.want {
			t.Errorf("%s: Is(%v, %d) = %v, want %v", tc.name, tc.err, tc.kind, got, tc.want)
		}
	}
	if !errors.Is(fmt.Errorf("w: %w", refused), refused) || errors.Is(New(Refused, "unsafe input"), refused) {
		t.Error("a sentinel must be itself under errors.Is, and only itself")
	}
	if refused.Error() != "unsafe input" {
		t.Errorf("Error() = %q", refused.Error())
	}
}
