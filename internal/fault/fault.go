// Package fault classifies errors by what whoever runs kbuild can do
// about them, as containerd's errdefs does: refused input is not retried,
// a failed verification is a security event, and an unavailable server
// is worth retrying later. A library declares the kind where it declares
// the error (New, or a Fault method on an error type), so a new error
// needs no table elsewhere to end a command with the right exit status.
package fault

// Kind is what can be done about a failure.
type Kind int

// The kinds of failure.
const (
	// Refused is input kbuild refuses: unsafe or oversized archives and
	// YAML, a recipe with errors, a render over its budget, a published
	// version built again with other content, refused evidence or
	// promotion, a bad bundle. Running again does not help.
	Refused Kind = iota + 1
	// Verification is a signature, digest, expiry or root-chain check
	// that failed.
	Verification
	// Unavailable is a network, registry, site or cluster that did not
	// answer or answered that it could not; retrying later may succeed.
	Unavailable
)

// Error is an error of a kind. Errors of any type carry their kind by
// having Error's Fault method.
type Error interface {
	error
	Fault() Kind
}

// New returns an error of kind k with the message text, for a sentinel
// (var ErrX = fault.New(fault.Refused, "…")).
func New(k Kind, text string) error { return &sentinel{text, k} }

type sentinel struct {
	text string
	kind Kind
}

func (e *sentinel) Error() string { return e.text }

// Fault is the error's kind.
func (e *sentinel) Fault() Kind { return e.kind }

// Is says whether err, or any error it wraps or joins, is of kind k.
// It asks every error of the tree itself: errors.As would stop at the
// first error with a kind, and one error may wrap errors of two kinds.
func Is(err error, k Kind) bool {
	switch e := any(err).(type) {
	case nil:
		return false
	case Error:
		if e.Fault() == k {
			return true
		}
	}
	switch u := any(err).(type) {
	case interface{ Unwrap() error }:
		return Is(u.Unwrap(), k)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if Is(e, k) {
				return true
			}
		}
	}
	return false
}
