package trust

import (
	"errors"
	"fmt"

	"kbuild.dev/kbuild/internal/fault"
)

// Sentinels that a *VerificationError wraps, for callers that branch on the
// kind of refusal with errors.Is.
var (
	// ErrNotSigned: a signature is missing, invalid, or made by a key that
	// is not trusted, or fewer keys signed than the threshold.
	ErrNotSigned = errors.New("not signed by a trusted key")
	// ErrExpired: the index or the root has expired.
	ErrExpired = errors.New("expired")
	// ErrRollback: the index or root is older than one accepted before.
	ErrRollback = errors.New("rollback")
	// ErrFork: a root version differs from the same version accepted
	// before.
	ErrFork = errors.New("fork")
	// ErrRootChain: the root chain skips or repeats a version.
	ErrRootChain = errors.New("broken root chain")
	// ErrDigest: a spec does not match its digest.
	ErrDigest = errors.New("digest mismatch")
	// ErrFuture: the index claims to be generated after the reference time.
	ErrFuture = errors.New("generated in the future")
	// ErrMalformed: the signed content is not a valid index or root.
	ErrMalformed = errors.New("malformed")
	// ErrTooLarge: a published file is larger than its documented limit
	// (MaxIndexSize, MaxSignaturesSize, MaxRootSize) or the root chain is
	// longer than a reader accepts.
	ErrTooLarge = fault.New(fault.Refused, "over its size limit")
)

// Sentinels a *VerificationError wraps when it is known what ends the
// refusal, so that a command line can name the command that does; each
// wraps the kind of refusal above it is (errors.Is(err, ErrExpired) holds
// for ErrRootExpired).
var (
	// ErrRootExpired: the newest root has expired; its root key holders
	// publish the next version.
	ErrRootExpired = fmt.Errorf("root %w", ErrExpired)
	// ErrIndexExpired: the index has expired; its publisher signs it
	// again.
	ErrIndexExpired = fmt.Errorf("index %w", ErrExpired)
	// ErrNoExpiry: under a root of trust, an index without expires.
	ErrNoExpiry = fmt.Errorf("no expiry, so never %w", ErrExpired)
	// ErrRootNotSigned: a root version not signed by the root keys of the
	// version before; those keys sign it.
	ErrRootNotSigned = fmt.Errorf("root %w", ErrNotSigned)
	// ErrIndexNotSigned: an index without enough signatures by the index
	// keys; a current index key signs it.
	ErrIndexNotSigned = fmt.Errorf("index %w", ErrNotSigned)
	// ErrBaseTooLarge: an index larger than an in-memory merge over it
	// takes (MaxKeptIndexSize); a streaming merge takes it.
	ErrBaseTooLarge = fmt.Errorf("base index %w", ErrTooLarge)
)

// VerificationError is a refusal: the index, a signature or a root was read
// but must not be trusted. It is distinct from I/O and transport errors, so
// that a command can tell "could not fetch" from "refused". Err is one of
// the sentinels above.
type VerificationError struct {
	// What names the refused object: "index.yaml", "root/2.yaml",
	// "kubevirt 1.9.0 build 4".
	What string
	// Err is the kind of refusal (ErrNotSigned, ErrExpired, …, or one of
	// the sentinels that wrap them: ErrRootExpired, …).
	Err error
	// Detail says what failed, expected against actual, and what to do.
	Detail string
}

// Fault says a failed verification is of kind fault.Verification.
func (e *VerificationError) Fault() fault.Kind { return fault.Verification }

func (e *VerificationError) Error() string {
	if e.What == "" {
		return e.Detail
	}
	return e.What + ": " + e.Detail
}

// Unwrap returns the sentinel.
func (e *VerificationError) Unwrap() error { return e.Err }

func refuse(what string, kind error, format string, args ...any) *VerificationError {
	return &VerificationError{What: what, Err: kind, Detail: fmt.Sprintf(format, args...)}
}
