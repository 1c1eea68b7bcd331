package main

import (
	"errors"
	"fmt"
	"strings"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/bump"
	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/review"
	"kbuild.dev/kbuild/sbom"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/suite"
	"kbuild.dev/kbuild/trust"
	"kbuild.dev/kbuild/watch"
)

// hints say what to do on the command line about an error a library
// returns: the library names its input (a sentinel, publish.InputError),
// never a flag or a command; the command line adds the hint, one per
// error, after the message.
var hints = []struct {
	err  error
	hint string
}{
	{siteread.ErrNoBase, "check the URL, or pass --allow-new to start a new repository (only for the first publication; KBUILD_ALLOW_NEW=1 does the same)"},
	{siteread.ErrUnverified, "it needs --public-key FILE or --root-key FILE"},
	{publish.ErrOtherRegistry, "publish to that registry, or keep every version's files (--site-keep 0)"},
	{siteread.ErrRootExists, "use 'kbuild trust root next' to change it"},
	{suite.ErrNoSuiteIndex, "for the first promotion into a suite pass --allow-new, otherwise restore the published site first"},
	{evidence.ErrNoRoot, "publish with --root"},
	{evidence.ErrNoQARole, "add one with 'kbuild trust root next ROOT.yaml --qa-key FILE'"},
	{builder.ErrAdoptable, "--adopt keeps it when its files are the same"},
	{review.ErrOtherKbuild, "or pass --other-kbuild to compare anyway"},
	{bump.ErrSetNeedsIndex, "give the published index (--index REF with --public-key or --root-key)"},
	{watch.ErrOffline, "run it without --offline"},
	{trust.ErrKeyFormat, "create keys with 'kbuild repo keygen'"},
	{netdeadline.ErrStalled, "raise --timeout if it is only slow"},
	{sbom.ErrTrivyNotFound, "or pass its path with --trivy"},
	{sbom.ErrDBFetch, "use --trivy-offline with --trivy-cache-dir to scan with one already there"},
}

// withHint returns err with the hint of the first sentinel it wraps, and
// an error about one input whose message starts with the input's name
// ("suite nightly is not in …") as about its flag ("--suite nightly …");
// other errors (and nil) as they are.
func withHint(err error) error {
	var pe *publish.InputError
	var ee *evidence.InputError
	switch {
	case errors.As(err, &pe) && strings.HasPrefix(err.Error(), pe.Input+" "),
		errors.As(err, &ee) && strings.HasPrefix(err.Error(), ee.Input+" "):
		err = fmt.Errorf("--%w", err)
	}
	for _, h := range hints {
		if errors.Is(err, h.err) {
			return fmt.Errorf("%w; %s", err, h.hint)
		}
	}
	return err
}
