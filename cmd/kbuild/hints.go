package main

import (
	"errors"
	"fmt"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/render"
	"kbuild.dev/kbuild/bump"
	"kbuild.dev/kbuild/bundle"
	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/hint"
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
// error, after the message, or, with Inside set, right after the
// sentinel's own words (where the library's message went on with its
// cause, as the hint used to come before it).
var hints = hint.Table{Typed: typedHint, Rules: []hint.Rule{
	{Err: siteread.ErrNoBase, Hint: "check the URL, or pass --allow-new to start a new repository (only for the first publication; KBUILD_ALLOW_NEW=1 does the same)"},
	{Err: siteread.ErrUnverified, Hint: "it needs --public-key FILE or --root-key FILE"},
	{Err: siteread.ErrNotBuilds, Hint: "a dist directory is what kbuild build -o DIST writes"},
	{Err: publish.ErrOtherRegistry, Hint: "publish to that registry, or keep every version's files (--site-keep 0)"},
	{Err: siteread.ErrRootExists, Hint: "use 'kbuild trust root next' to change it"},
	{Err: suite.ErrNoSuiteIndex, Hint: "for the first promotion into a suite pass --allow-new, otherwise restore the published site first"},
	{Err: evidence.ErrNoRoot, Hint: "publish with --root"},
	{Err: evidence.ErrNoQARole, Hint: "add one with 'kbuild trust root next ROOT.yaml --qa-key FILE'"},
	{Err: builder.ErrAdoptable, Hint: "--adopt keeps it when its files are the same"},
	{Err: builder.ErrNoRecipe, Hint: "kbuild init writes one"},
	{Err: sbom.ErrIndexDigest, Hint: "write it again with kbuild repo index"},
	{Err: builder.ErrPluginTimeout, Hint: "raise --plugin-timeout if it is only slow"},
	{Err: review.ErrOtherKbuild, Hint: "or pass --other-kbuild to compare anyway"},
	{Err: review.ErrNoGitBase, Hint: "use --index REF", Inside: true},
	{Err: bump.ErrSetNeedsIndex, Hint: "give the published index (--index REF with --public-key or --root-key)"},
	{Err: watch.ErrOffline, Hint: "run it without --offline"},
	{Err: trust.ErrKeyFormat, Hint: "create keys with 'kbuild repo keygen'"},
	{Err: trust.ErrRootExpired, Hint: "'kbuild trust root next' writes it"},
	{Err: trust.ErrRootNotSigned, Hint: "they sign it with 'kbuild trust root sign'"},
	{Err: trust.ErrIndexExpired, Hint: "'kbuild repo index --index' signs it again"},
	{Err: trust.ErrNoExpiry, Hint: "publish it with --expires"},
	{Err: trust.ErrIndexNotSigned, Hint: "kbuild publish --sign-key FILE signs it"},
	{Err: trust.ErrBaseTooLarge, Hint: "'kbuild repo index --index' streams the base"},
	{Err: index.ErrSignedRelocation, Hint: "leave that repository out of --relocate"},
	{Err: index.ErrUnbuiltComponent, Hint: "build the recipe with 'kbuild build'"},
	{Err: netdeadline.ErrStalled, Hint: "raise --timeout if it is only slow"},
	{Err: sbom.ErrTrivyNotFound, Hint: "or pass its path with --trivy"},
	{Err: sbom.ErrDBFetch, Hint: "use --trivy-offline with --trivy-cache-dir to scan with one already there"},
	{Err: sbom.ErrNoDB, Hint: "scan once without --trivy-offline, or run trivy image --download-db-only with --cache-dir set to the --trivy-cache-dir", Inside: true},
	{Err: bundle.ErrPartialIndex, Hint: "it was made with --platform: make the bundle without --platform for this mirror", Inside: true},
	{Err: bundle.ErrNoTrustedRoot, Hint: "bundle create takes one with --trusted-root"},
}}

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

// withHint returns err with its hint (hint.Table.Apply): the hint of the
// first sentinel it wraps, an error about one input whose message starts
// with the input's name ("suite nightly is not in …") as about its flag
// ("--suite nightly …"), each error joined with errors.Join with its own;
// other errors (and nil) as they are.
func withHint(err error) error { return hints.Apply(err) }

// withInputFlag returns err prefixed with the flag of its input ("--relocate:
// …") when it is about one input of the publisher (a *publish.InputError),
// for the commands whose flags the publisher's inputs are (publish, repo
// index, repo withdraw); other errors as they are.
func withInputFlag(err error) error {
	var ie *publish.InputError
	if errors.As(err, &ie) {
		return fmt.Errorf("--%s: %w", ie.Input, err)
	}
	return err
}
