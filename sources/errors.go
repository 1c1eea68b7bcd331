package sources

import (
	"errors"
	"fmt"
	"strconv"
)

// maxNameInError bounds how much of a name from outside (a chart name, an
// archive entry, a key) an error message repeats.
const maxNameInError = 120

// quoteName quotes s for an error message, cut to maxNameInError bytes
// with its full length said, so that hostile input cannot fill a log line.
func quoteName(s string) string {
	if len(s) <= maxNameInError {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:maxNameInError]) + fmt.Sprintf("… (%d bytes)", len(s))
}

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
