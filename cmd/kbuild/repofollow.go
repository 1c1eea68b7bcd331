package main

import (
	"context"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/suite"
)

func newRepoFollowCmd() *Command {
	var (
		a    = &suite.FollowSite{}
		keys options.TrustFlags
	)
	return &Command{
		Use:     "follow --site DIR (--root-key FILE | --public-key FILE) [--suites suites.yaml]",
		Summary: "Make each suite's followable OCI repositories hold exactly the suite's builds, for Flux, Argo CD and Helm.",
		Help: `A Flux, Argo CD or plain Helm cluster cannot read a kubepkg index; it follows
an OCI repository with a version range (Flux's ref.semver, Argo CD's
targetRevision, helm --version). So beside each chart repository REPO/NAME
that a suite pins, REPO/suites/SUITE/NAME holds exactly the builds SUITE
holds: follow copies each chart the suite's verified index pins into it
under the same tag, with the same manifest digest (blobs mounted) and every
referrer (the cosign signature and attestations Flux verifies, the SBOM,
provenance and evidence), after checking its archive is the one the index
pins; and it deletes from it every tag the suite does not hold (a withdrawn
build). A tag there is never moved: a different manifest under a suite's
tag is an error to resolve by hand. A range over the stable repository
thus selects only promoted builds, the newest first, and a promotion or a
withdrawal reaches the clusters at their next reconciliation.

Run it after every publish, promote and withdraw (and the weekly
re-signing), as the example workflows do; it is idempotent. Suites without
an index yet are skipped. The registry must allow deleting manifests
(docker-registry with storage.delete.enabled, Harbor, Zot, ECR, GAR, ACR);
on GHCR a withdrawn build must be deleted through GitHub's API, which
follow says.

Examples:
  # after 'kbuild promote ... --to stable'
  kbuild repo follow --site _site --root-key keys/root.pub

  # a local registry in a test
  kbuild repo follow --site _site --public-key keys/index.pub --plain-http`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&a.Site, "site", "_site", "site directory `DIR` holding <suite>/index.yaml")
			fs.StringVar(&a.SuitesFile, "suites", suite.File, "the suites file")
			keys.AddFlags(fs)
			options.AddPlainHTTPFlag(fs, &a.PlainHTTP, "")
			options.AddTimeoutFlag(fs, &a.Timeout, "a registry")
		},
		Args: exactArgs(0, "follow takes no arguments"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			var err error
			if a.Trust, err = keys.Require("repo follow"); err != nil {
				return err
			}
			out, err := a.Run(ctx)
			suite.WriteFollowed(env.Stdout, out)
			return err
		},
	}
}
