package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/suite"
)

func newRepoVerifyCmd() *Command {
	var (
		a  = &suite.Verify{}
		it options.IndexFlags
	)
	return &Command{
		Use:     "verify --index REF (--public-key FILE... [--threshold N] | --root-key FILE... [--root-threshold N]) [--state FILE] [--charts]",
		Summary: "Verify a published index as a subscriber does.",
		Help: `Fetches index.yaml and index.yaml.sig (and, with --root-key, root.yaml and
root/1.yaml … root/N.yaml) of --index (a site directory, an index.yaml or an
http(s) URL; given as the argument, the old spelling, it still works for one
release) and checks, in
a subscriber's order: each root version signed by the previous one's root
keys and its own, from the pinned keys on; the newest root not expired;
index.yaml signed by a threshold of trusted keys (the root's index role);
its expiry; every spec against its digest; delegated package versions
signed by their delegation (those without enough signatures are dropped,
with a warning). With --state FILE it refuses an index or root older than
the one recorded, or a root that differs from the recorded version (a
fork), then records the new one. With --charts it pulls every pinned chart
and compares its archive digest with the pin. With --evidence DIR (a
site's evidence/, written by 'kbuild attest') it verifies the test evidence
of every version the index holds: signed by the root's qa role, about
exactly the digests the index pins, not expired.

Expiry is checked whichever way the keys are given, which is stricter than
kubepkg: a kubepkg cluster whose Repository pins trust.rootKeys refuses an
expired index (and one without expires), but one pinned with plain
publicKeys never reads expires, so for it an old signed index stays valid
until its key is rotated. Indexes kubepkg writes are read as kubepkg reads
them: build 0, versions with a leading v, no generated time or apiVersion,
and unknown fields (ignored with a warning; a version whose spec has one is
kept without it when its digest matches the spec without the field, and
left out otherwise, as kubepkg does, with a warning naming the package,
version and field).

The signature checked is index.yaml.sig, the only one kubepkg reads: a
site whose index.yaml.sig is missing, malformed, or made by a root key or
a rotated-out index key is refused, even when by-hash/sha256/<digest>.sig
holds a good signature (that file is checked too when present, never
instead).

Exit status: 0 verified; 4 refused: a signature, digest, expiry, chart pin
or evidence check failed (the message says why); 3 a file over its
documented size limit; 5 the site could not be read (no connection, a
server that stalls or answers 5xx); 1 anything else (a missing index). The mistake to avoid: trusting keys fetched from the site
itself — pass keys you got out of band.

Examples:
  # verify a site with its index key
  kbuild repo verify --index https://example.github.io/packages/index.yaml --public-key keys/index.pub

  # under a root of trust, remembering what was accepted
  kbuild repo verify --index https://example.github.io/packages/ --root-key keys/root1.pub --root-key keys/root2.pub --root-threshold 2 --state .kbuild-state.json

  # a local site, and every chart it pins (loopback registry)
  kbuild repo verify --index _site/index.yaml --public-key keys/index.pub --charts --plain-http

  # the stable suite and the test evidence of what it holds
  kbuild repo verify --index _site/stable/index.yaml --root-key keys/root.pub --evidence _site/evidence`,
		Flags: func(fs *pflag.FlagSet) {
			it.AddFlags(fs, "to verify (required)")
			fs.StringVar(&a.StateFile, "state", "", "file `FILE` recording the last accepted index and root; refuses rollbacks and forks, then is updated")
			fs.BoolVar(&a.Charts, "charts", false, "also pull every chart and check its archive digest against the pin")
			options.AddPlainHTTPFlag(fs, &a.PlainHTTP, "for --charts")
			options.AddTimeoutFlag(fs, &a.Timeout, "the site or a registry")
			fs.StringVar(&a.Evidence, "evidence", "", "directory `DIR` of test evidence (a site's evidence/) to verify for the versions the index holds; needs --root-key")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			a.Ref = it.Ref
			switch {
			case a.Ref == "" && len(args) == 1:
				a.Ref = args[0]
				fmt.Fprintf(env.Stderr, "warning: kbuild repo verify: the index as an argument is deprecated and goes away in the next release; use --index %s\n", a.Ref)
			case a.Ref == "" || len(args) > 0:
				return usagef("verify takes one --index REF (a site directory, index.yaml or http(s) URL) and no arguments")
			}
			if a.Evidence != "" && len(it.RootKeys) == 0 {
				return usagef("--evidence needs --root-key: evidence is signed by the root's qa role")
			}
			var err error
			if a.Trust, err = it.Require("verify"); err != nil {
				return err
			}
			tuneGC(env)
			res, err := a.Run(ctx)
			if res == nil || res.Verified == nil {
				return refusal(env, err) // a refused index, or an error before it was read
			}
			if !res.WriteChecks(env.Stderr, a.Charts) {
				return &exitError{Code: exitVerification}
			}
			if err != nil {
				return err
			}
			if !res.WriteText(env.Stdout, env.Stderr, a.Evidence, a.Now) {
				return &exitError{Code: exitVerification}
			}
			return nil
		},
	}
}
