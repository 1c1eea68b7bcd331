package main

import (
	"errors"
	"fmt"
	"strings"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/render"
	"kbuild.dev/kbuild/bump"
	"kbuild.dev/kbuild/bundle"
	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/recipe/draft"
	"kbuild.dev/kbuild/review"
	"kbuild.dev/kbuild/sbom"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/sources"
	"kbuild.dev/kbuild/suite"
	"kbuild.dev/kbuild/trust"
	"kbuild.dev/kbuild/watch"
)

// hints say what to do on the command line about an error a library
// returns: the library names its input (a sentinel, publish.InputError),
// never a flag or a command; the command line adds the hint, one per
// error, after the message, or, with inside set, right after the
// sentinel's own words (where the library's message went on with its
// cause, as the hint used to come before it).
var hints = []struct {
	err    error
	hint   string
	inside bool
}{
	{err: siteread.ErrNoBase, hint: "check the URL, or pass --allow-new to start a new repository (only for the first publication; KBUILD_ALLOW_NEW=1 does the same)"},
	{err: siteread.ErrUnverified, hint: "it needs --public-key FILE or --root-key FILE"},
	{err: siteread.ErrNotBuilds, hint: "a dist directory is what kbuild build -o DIST writes"},
	{err: publish.ErrOtherRegistry, hint: "publish to that registry, or keep every version's files (--site-keep 0)"},
	{err: siteread.ErrRootExists, hint: "use 'kbuild trust root next' to change it"},
	{err: suite.ErrNoSuiteIndex, hint: "for the first promotion into a suite pass --allow-new, otherwise restore the published site first"},
	{err: evidence.ErrNoRoot, hint: "publish with --root"},
	{err: evidence.ErrNoQARole, hint: "add one with 'kbuild trust root next ROOT.yaml --qa-key FILE'"},
	{err: builder.ErrAdoptable, hint: "--adopt keeps it when its files are the same"},
	{err: builder.ErrNoRecipe, hint: "kbuild init writes one"},
	{err: sbom.ErrIndexDigest, hint: "write it again with kbuild repo index"},
	{err: builder.ErrPluginTimeout, hint: "raise --plugin-timeout if it is only slow"},
	{err: review.ErrOtherKbuild, hint: "or pass --other-kbuild to compare anyway"},
	{err: review.ErrNoGitBase, hint: "use --index REF", inside: true},
	{err: bump.ErrSetNeedsIndex, hint: "give the published index (--index REF with --public-key or --root-key)"},
	{err: watch.ErrOffline, hint: "run it without --offline"},
	{err: trust.ErrKeyFormat, hint: "create keys with 'kbuild repo keygen'"},
	{err: trust.ErrRootExpired, hint: "'kbuild trust root next' writes it"},
	{err: trust.ErrRootNotSigned, hint: "they sign it with 'kbuild trust root sign'"},
	{err: trust.ErrIndexExpired, hint: "'kbuild repo index --index' signs it again"},
	{err: trust.ErrNoExpiry, hint: "publish it with --expires"},
	{err: trust.ErrIndexNotSigned, hint: "kbuild publish --sign-key FILE signs it"},
	{err: trust.ErrBaseTooLarge, hint: "'kbuild repo index --index' streams the base"},
	{err: index.ErrSignedRelocation, hint: "leave that repository out of --relocate"},
	{err: netdeadline.ErrStalled, hint: "raise --timeout if it is only slow"},
	{err: sbom.ErrTrivyNotFound, hint: "or pass its path with --trivy"},
	{err: sbom.ErrDBFetch, hint: "use --trivy-offline with --trivy-cache-dir to scan with one already there"},
	{err: sbom.ErrNoDB, hint: "scan once without --trivy-offline, or run trivy image --download-db-only with --cache-dir set to the --trivy-cache-dir", inside: true},
	{err: bundle.ErrPartialIndex, hint: "it was made with --platform: make the bundle without --platform for this mirror", inside: true},
	{err: bundle.ErrNoTrustedRoot, hint: "bundle create takes one with --trusted-root"},
}

// typedHint is the hint about an error that carries its data (a
// *sources.NotCachedError, …), or "".
func typedHint(err error) string {
	var nc *sources.NotCachedError
	var kv *render.KubeVersionError
	var nr *siteread.NoRecordsError
	var re *trust.RootEditError
	var de *draft.RequestError
	switch {
	case errors.As(err, &nc):
		switch {
		case nc.Recipe != "":
			return "fetch it while online with: kbuild fetch " + nc.Recipe
		case nc.Unrecorded:
			return "pin it once without --offline (kbuild init), kbuild fetch a recipe that pins it, or, for a url downloaded by other means, kbuild cache add --url URL FILE"
		case nc.Pinning:
			return "pin it once without --offline"
		}
		return "run once without --offline"
	case errors.As(err, &kv):
		if kv.Requested != "" {
			return "pick a version in that range with --kube-version"
		}
		return "render it with --kube-version"
	case errors.As(err, &nr):
		return "run kbuild build -o " + nr.Dir + " first"
	case errors.As(err, &re) && re.Missing != "":
		return "add it with --delegate " + re.Missing + "=PATTERN"
	case errors.As(err, &de) && de.Input == "":
		return "pass --chart REPO/NAME@VERSION or --manifest URL"
	case errors.As(err, &de) && de.Input == "version":
		return "give it with --version"
	}
	return ""
}

// inputOf is the name of the input an error is about (publish's,
// evidence's and trust's InputError, a root edit, a draft request), or "".
func inputOf(err error) string {
	var pe *publish.InputError
	var ee *evidence.InputError
	var te *trust.InputError
	var re *trust.RootEditError
	var de *draft.RequestError
	switch {
	case errors.As(err, &pe):
		return pe.Input
	case errors.As(err, &ee):
		return ee.Input
	case errors.As(err, &te):
		return te.Input
	case errors.As(err, &re):
		return re.Input
	case errors.As(err, &de):
		return de.Input
	}
	return ""
}

// withHint returns err with the hint of the first sentinel it wraps, and
// an error about one input whose message starts with the input's name
// ("suite nightly is not in …") as about its flag ("--suite nightly …");
// errors joined with errors.Join each get their own; other errors (and
// nil) as they are.
func withHint(err error) error {
	if err == nil {
		return nil
	}
	if prefix, errs, ok := joinedIn(err); ok {
		hinted := make([]error, len(errs))
		for i, e := range errs {
			hinted[i] = withHint(e)
		}
		if prefix == "" {
			return errors.Join(hinted...)
		}
		return &hintedError{err: err, msg: prefix + errors.Join(hinted...).Error()}
	}
	if in := inputOf(err); in != "" && strings.HasPrefix(err.Error(), in+" ") {
		err = fmt.Errorf("--%w", err)
	}
	for _, h := range hints {
		if !errors.Is(err, h.err) {
			continue
		}
		if msg, words := err.Error(), h.err.Error(); h.inside && strings.Contains(msg, words) {
			at := strings.Index(msg, words) + len(words)
			return &hintedError{err: err, msg: msg[:at] + "; " + h.hint + msg[at:]}
		}
		return fmt.Errorf("%w; %s", err, h.hint)
	}
	if hint := typedHint(err); hint != "" {
		return fmt.Errorf("%w; %s", err, hint)
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
