package sources

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"kbuild.dev/kbuild/internal/atomicfile"
)

// A refused archive is removed from the cache, and the refusal is
// remembered beside it, under refused/, keyed by the archive's digest and
// the limits it was judged by: the pinned bytes cannot change, so a re-run
// refuses at once instead of downloading and extracting it again. Raising
// a limit (--max-extract...) judges it afresh; deleting the record does
// too.

// ErrRefusedBefore is wrapped by the error of an archive whose refusal was
// remembered.
var ErrRefusedBefore = errors.New("refused before")

// An extraction killed before it finished (out of memory, a deadline,
// SIGKILL) is remembered too: while an archive is extracted, a marker
// under extracting/ (same name as its refusal) is held locked; a marker
// that is left and that no process holds is an extraction that died, and
// the next run turns it into a remembered refusal instead of extracting
// the archive again (to be killed again).

// refusalName names the refusal of digest under the Fetcher's limits and o.
func (f *Fetcher) refusalName(digest string, o extractOptions) string {
	return fmt.Sprintf("%s-%d-%d-%t", strings.TrimPrefix(digest, "sha256:"), f.maxExtract, f.maxFile, o.noSymlinks)
}

// refusalPath is where the refusal of digest under the Fetcher's limits
// and o is remembered.
func (f *Fetcher) refusalPath(digest string, o extractOptions) string {
	return filepath.Join(f.cache.dir, "refused", f.refusalName(digest, o))
}

// markerPath is the marker of an extraction of digest under the
// Fetcher's limits and o.
func (f *Fetcher) markerPath(digest string, o extractOptions) string {
	return filepath.Join(f.cache.dir, "extracting", f.refusalName(digest, o))
}

// interruptedBefore turns an extraction of digest that died into a
// remembered refusal: the archive is removed from the cache.
func (f *Fetcher) interruptedBefore(digest string, o extractOptions) {
	marker := f.markerPath(digest, o)
	since, ok := deadMarker(marker)
	if !ok {
		return
	}
	f.cache.remove(digest)
	f.rememberRefusal(digest, o, fmt.Errorf("its extraction (started %s) was killed before it finished — out of memory, a deadline or SIGKILL — and left %s; an archive that cannot be extracted within this machine's limits is not extracted again: %w", since, marker, ErrTooLarge))
	os.Remove(marker)
}

// refusedBefore returns the remembered refusal of the archive digest, or
// nil. The error keeps the class of the first refusal (ErrUnsafe,
// ErrTooLarge).
func (f *Fetcher) refusedBefore(digest string, o extractOptions) error {
	f.interruptedBefore(digest, o)
	p := f.refusalPath(digest, o)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) || err != nil {
		return nil
	}
	class, msg, _ := strings.Cut(string(b), "\n")
	var sentinel error = ErrRefusedBefore
	switch class {
	case "unsafe":
		sentinel = ErrUnsafe
	case "too-large":
		sentinel = ErrTooLarge
	}
	return fmt.Errorf("%s was refused before with the same limits, and was not downloaded or extracted again: %s (remembered in %s; delete it to judge the archive again): %w",
		digest, cut(msg, 500), p, errors.Join(sentinel, ErrRefusedBefore))
}

// rememberRefusal records why the archive digest was refused.
func (f *Fetcher) rememberRefusal(digest string, o extractOptions, refusal error) {
	class := "other"
	switch {
	case errors.Is(refusal, ErrUnsafe):
		class = "unsafe"
	case errors.Is(refusal, ErrTooLarge):
		class = "too-large"
	}
	p := f.refusalPath(digest, o)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	if err := atomicfile.WriteFile(p, []byte(class+"\n"+cut(refusal.Error(), 2000)), 0o644); err == nil {
		f.logf("remembered the refusal of %s in %s", digest, p)
	}
}

// cut shortens s to at most n bytes.
func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
