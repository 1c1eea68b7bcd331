package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/examples"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/suite"
)

func newPublishCmd() *Command {
	var (
		a        = &suite.Publish{}
		build    options.BuildFlags
		keys     options.SignerFlags
		kl       options.KeylessFlags
		merge    options.MergeFlags
		expires  time.Duration
		noExpiry bool
		siteKeep int
	)
	return &Command{
		Use:     "publish [RECIPES_DIR] [--registry oci://HOST/PATH] [--site DIR] [--sign-key FILE] [--index REF (--public-key FILE | --root-key FILE | --index-root FILE)]",
		Summary: "Build every recipe, push the charts and publish the signed index, catalog and SBOMs.",
		Help: `publish is the main job. It validates and builds every recipe of RECIPES_DIR in
parallel, pushes the charts (and copies the recipes' image sources) into the
registry, merges the builds into the published index after verifying that
index's signature, signs the new index and writes the site: index.yaml and
index.yaml.sig, the same signature under by-hash/sha256/<index sha256>.sig,
the public keys under keys/, root.yaml and root/N.yaml when --root is given,
SBOMs under sbom/ (sbom.cdx.json references one per version), signed build
provenance under provenance/ (also attached to each chart in the registry as
an OCI referrer), and an HTML catalog.

Only what this run pushed, or the verified base already had, is signed:
other build records in the output directory are ignored with a warning, and
every new chart's manifest is confirmed in the registry before signing. A
recipe whose name@version build N is published is not rebuilt ("up to
date") unless --rebuild is given, and then its digests must equal the
published ones; a withdrawn one ('kbuild repo withdraw') is skipped. A
recipe published under its version and build with another spec (a
capability, requirement, image or install setting changed without a new
build number) is refused before anything is built, naming the field: bump
spec.build, since kubepkg clients would keep the published spec. With
nothing new the base is re-signed with a fresh expiry.

Each version's SBOM is also attached to its charts as an OCI referrer, as
its provenance is, so the registry keeps both as long as the charts. The site
keeps those two files for the newest --site-keep versions of each package
(10, the versions a package page shows in full; 0 keeps all): when a publish
changes a package, the files of its older versions are removed after the new
index is in place, once their SBOM is attached in the registry (a version
published before SBOMs were referrers gets its referrer then). Build info,
index entries and tombstones stay for every version, and sbom.cdx.json and
the package pages point at the registry for the others.

Publishing is incremental: the files of versions published before are left
as they are in --site, so --site must start as a copy of the published site
(CI restores it; see CONTRIBUTING.md). It is atomic: everything is pushed
and every other file written before index.yaml.sig and index.yaml, which
are replaced last through renames; a publish that fails leaves the previous
index in place and can be re-run. A second publish into the same --site
fails while the first runs.

The base index is --index (a site directory, index.yaml or URL; once
--merge), verified with --public-key, --root-key or --index-root (your
root.yaml); without --index, an index already in --site is the base,
verified with the signing keys. A base that is missing is an error unless
--allow-new; a base that fails verification stops the publish. Moving a
repository from kubepkg, --adopt keeps the charts kubepkg pushed under the
same version and build when their files and Chart.yaml meaning are the
same (see 'kbuild build --help').

With no arguments it builds the bundled examples into the local OCI layout
dist/oci and the site _site, signed with a throwaway key kept in
dist/throwaway-index.key; 'kbuild serve' then serves both.

With a suites file (--suites, suites.yaml at the repository root by
default), the site holds one complete signed index per suite, at
SITE/<suite>/index.yaml: publish writes new builds into the first suite's
directory (--index then names that suite's published index), and 'kbuild
promote' moves them on. With "rootSuite: <first suite>" in it, the first
suite's signed index, signatures, root chain and keys are then copied to
SITE/ too, byte for byte, so subscribers of SITE/index.yaml from before
the suites keep working (they follow the first suite). Without a suites
file, publish writes SITE/index.yaml as always.

Test evidence reaches the site through the repository: QA signs it with
'kbuild attest -o evidence/…' and commits it by pull request. Each file
under --evidence (evidence/ by default) that the site lacks is verified
before anything is built — signed by the qa role of --root, about exactly
the digests the published index pins, not expired — then, after the index
is signed, attached to each chart of its version as an OCI referrer and
copied to SITE/evidence/<name>-<version>-<build>/<environment>.intoto.json,
where 'kbuild promote' reads it. One file that does not verify stops the
publish, naming the file; nothing is written.

With --keyless (in GitHub Actions, permissions id-token: write; elsewhere
a token in KBUILD_OIDC_TOKEN), every chart's signature, SBOM and provenance
are also signed keylessly: a Fulcio certificate (--fulcio-url) for the
job's OIDC identity and a Rekor entry (--rekor-url), checked by 'cosign
verify --certificate-identity … --certificate-oidc-issuer …' and Flux's
verify.matchOIDCIdentity. The site names that identity
(keys/keyless.json) and the catalog's Flux snippets and cosign lines pin
it. The index is still signed by the repository's key. With a private
Sigstore, --trusted-root (its trusted_root.json) makes each keyless
signature verified before it is pushed, so a misconfigured instance stops
the publish instead of shipping signatures no cluster can verify.

Without --sign-key or --sign-key-env, the key in KBUILD_SIGN_KEY (a PEM
private key, from a CI secret) signs, and with --index and no key for it
verifies the base; KBUILD_ALLOW_NEW=1 is --allow-new.

Examples:
  # the bundled examples, no registry and no network
  kbuild publish

  # what CI runs on main
  kbuild publish recipes/ --registry oci://ghcr.io/acme/packages \
    --sign-key-env KBUILD_SIGN_KEY --site _site \
    --index https://acme.github.io/packages/index.yaml --public-key keys/index.pub

  # keep every version's SBOM and provenance file in the site
  kbuild publish recipes/ --registry oci://ghcr.io/acme/packages \
    --sign-key-env KBUILD_SIGN_KEY --site-keep 0

  # with suites.yaml and evidence/ in the repository: verify the evidence
  # against the root's qa role, publish into unstable, attach the evidence
  kbuild publish recipes/ --registry oci://ghcr.io/acme/packages --sign-key-env KBUILD_SIGN_KEY \
    --root keys/root.yaml --index https://acme.github.io/packages/index.yaml --index-root keys/root.yaml`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&a.Site, "site", "_site", "site directory `DIR` the site is written to (what Pages serves)")
			keys.AddFlags(fs, "the index and provenance")
			kl.AddFlags(fs)
			merge.AddFlags(fs)
			fs.StringVar(&a.Root, "root", "", "root.yaml `FILE` to publish beside the index, with root/N.yaml from its directory")
			fs.DurationVar(&expires, "expires", 30*24*time.Hour, "how long subscribers accept the index")
			fs.BoolVar(&noExpiry, "no-expiry", false, "allow --expires 0 (an index that never expires; not with a root)")
			fs.BoolVar(&a.Rebuild, "rebuild", false, "rebuild published versions too; their digests must not change")
			fs.StringVar(&a.ScanReport, "scan-report", "", "kbuild scan --format json report `FILE` to publish as scan.json")
			fs.StringVar(&a.Title, "title", "", "title of the catalog (default: kubepkg repository)")
			fs.IntVar(&siteKeep, "site-keep", publish.DefaultSiteKeep, "keep the SBOM and provenance files of the newest `N` versions of each package in the site (0: every version); older ones stay OCI referrers of their charts")
			fs.StringVar(&a.SuitesFile, "suites", suite.File, "the suites file; when it exists, new builds go into SITE/<first suite>/")
			fs.StringVar(&a.EvidenceDir, "evidence", suite.EvidenceDir, "directory `DIR` of test evidence in the repository (committed by pull request): new files are verified against --root's qa role, copied into SITE/evidence/ and attached to their charts")
			build.AddFlags(fs)
			build.AddPublishFlags(fs)
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) > 1 {
				return usagef("name at most one recipes directory")
			}
			if err := merge.CheckSigning(env, &keys); err != nil {
				return err
			}
			if expires == 0 && !noExpiry {
				return usagef("--expires 0 makes an index that never expires; say --no-expiry too if that is meant")
			}
			if siteKeep < 0 {
				return usagef("--site-keep %d: expected a number of versions, 0 for every version", siteKeep)
			}
			display := func(dir string) string { return dir }
			if len(args) == 0 { // a temporary copy of the bundled examples stands in for the argument
				tmp, err := os.MkdirTemp("", "kbuild-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				args = []string{filepath.Join(tmp, "examples")}
				if err := os.CopyFS(args[0], examples.FS); err != nil {
					return err
				}
				display = func(dir string) string { return strings.TrimPrefix(dir, tmp+string(filepath.Separator)) }
				fmt.Fprintln(env.Stderr, "no recipes directory given: publishing the bundled examples")
			}
			recipesDir := args[0]
			var err error
			if a.Signers, err = keys.IndexSignersOrThrowaway(env, build.Out); err != nil {
				return err
			}
			if a.MergeTrust, err = merge.MergeTrust(a.Signers); err != nil {
				return err
			}
			ks, err := kl.Signer(ctx, env)
			if err != nil {
				return err
			}
			if a.Generated, err = epochOrNow(env); err != nil {
				return err
			}
			t, err := build.Target(env)
			if err != nil {
				return err
			}
			b, err := build.Builder(env, thisKbuild(), t, recipesDir)
			if err != nil {
				return err
			}
			a.Merge = merge.Ref
			a.AllowNew = merge.AllowNew
			a.Timeout = build.Timeout
			a.PlainHTTP = build.PlainHTTP
			a.Stderr = env.Stderr
			a.Options = []publish.Option{
				publish.WithExpires(expires), publish.WithSiteKeep(siteKeep), publish.WithOutput(env.Stdout, env.Stderr), publish.WithKeyless(ks),
				publish.WithProvenance("kbuild", version, b.Epoch(), env.Getenv),
				publish.WithBuilder(b), publish.WithTarget(t), publish.WithDist(build.Out), publish.WithFetcher(b.Fetcher()),
				publish.WithReport(func(results []*builder.Result, err error) error {
					return reportBuilds(env, results, err, display, "; nothing was published")
				}, display)}
			res, err := a.Run(ctx, recipesDir)
			if errors.Is(err, suite.ErrNeedsRoot) {
				return fmt.Errorf("%w, so publish needs --root ROOT.yaml", err)
			}
			if res != nil {
				res.WriteText(env.Stdout, a.Site, a.Signers)
			}
			return withInputFlag(err)
		},
	}
}
