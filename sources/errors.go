package sources

import (
	"errors"
	"fmt"

	"kbuild.dev/kbuild/recipe"
)

// quoteName quotes a name from outside for an error message, cut short
// (recipe.Quote).
func quoteName(s string) string { return recipe.Quote(s) }

// ErrOffline is wrapped by every error that Fetch returns in offline mode
// when a source is not in the cache. The message names the source and the
// command that fetches it.
var ErrOffline = errors.New("offline")

// ErrUnsafe is wrapped by errors about hostile or malformed input: archive
// entries that would leave their directory, links out of a tree, device
// files, duplicate names, YAML that expands without bound.
var ErrUnsafe = errors.New("unsafe input")

// ErrTooLarge is wrapped by errors about a download, an index or an
// extracted file that exceeds its size limit.
var ErrTooLarge = errors.New("size limit exceeded")

// ErrUnavailable is wrapped by errors about a server that answered 5xx
// or 429: worth retrying later.
var ErrUnavailable = errors.New("server unavailable")

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

func (e *DigestMismatchError) Error() string {
	msg := fmt.Sprintf("%s: sha256 mismatch for %s: expected %s, got %s (%d bytes)", e.What, e.URL, e.Expected, e.Got, e.Size)
	if e.Note != "" {
		msg += "; " + e.Note
	}
	return msg + "; if upstream changed on purpose, update the pin and bump spec.build"
}
