package sources

import (
	"errors"
	"fmt"

	"kbuild.dev/kbuild/internal/fault"
	"kbuild.dev/kbuild/recipe"
)

// quoteName quotes a name from outside for an error message, cut short
// (recipe.Quote).
func quoteName(s string) string { return recipe.Quote(s) }

// ErrOffline is wrapped by every error that Fetch or Pin returns in
// offline mode when a source is not in the cache (a *NotCachedError, which
// names the source).
var ErrOffline = errors.New("offline")

// NotCachedError is the error of an offline Fetch or Pin that needs a
// source the cache does not hold; it wraps ErrOffline. Its fields say how
// the cache would get it, and a command line turns them into the command
// to run.
type NotCachedError struct {
	// What names the source: "chart repository index URL", "git URL",
	// the URL with its digest, ….
	What string
	// Cache is the cache directory.
	Cache string
	// Recipe is the directory of the recipe a Fetch was fetching; empty
	// for a Pin and for a chart repository's index.
	Recipe string
	// Pinning is set when a Pin needed the source (its archive digest
	// known, its bytes not cached).
	Pinning bool
	// Unrecorded is set when nothing in the cache records the source's
	// digest: a Pin of a url or chart seen offline for the first time.
	Unrecorded bool
}

func (e *NotCachedError) Error() string {
	msg := fmt.Sprintf("%v: %s is not in the cache %s", ErrOffline, e.What, e.Cache)
	if e.Unrecorded {
		msg += " (nothing records its digest)"
	}
	return msg
}

// Unwrap returns ErrOffline.
func (e *NotCachedError) Unwrap() error { return ErrOffline }

// ErrUnsafe is wrapped by errors about hostile or malformed input: archive
// entries that would leave their directory, links out of a tree, device
// files, duplicate names, YAML that expands without bound.
var ErrUnsafe = fault.New(fault.Refused, "unsafe input")

// ErrTooLarge is wrapped by errors about a download, an index or an
// extracted file that exceeds its size limit.
var ErrTooLarge = fault.New(fault.Refused, "size limit exceeded")

// ErrUnavailable is wrapped by errors about a server that answered 5xx
// or 429: worth retrying later.
var ErrUnavailable = fault.New(fault.Unavailable, "server unavailable")

// DigestMismatchError reports content whose sha256 is not the pinned one.
// Nothing is stored in the cache under the expected digest when it occurs.
type DigestMismatchError struct {
	// What names the content: "source NAME", or the chart name, version
	// and repository.
	What string
	// URL is where the bytes came from.
	URL string
	// Expected is the pinned digest and Got the digest of the bytes
	// received, both "sha256:<hex>".
	Expected, Got string
	// Size is the number of bytes received.
	Size int64
	// Note adds what else is known, such as what a chart repository index
	// lists for the entry; it may be empty.
	Note string
}

// Fault says a digest mismatch is of kind fault.Verification.
func (e *DigestMismatchError) Fault() fault.Kind { return fault.Verification }

func (e *DigestMismatchError) Error() string {
	msg := fmt.Sprintf("%s: sha256 mismatch for %s: expected %s, got %s (%d bytes)", e.What, e.URL, e.Expected, e.Got, e.Size)
	if e.Note != "" {
		msg += "; " + e.Note
	}
	return msg + "; if upstream changed on purpose, update the pin and bump spec.build"
}
