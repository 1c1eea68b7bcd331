package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/cmd/kbuild/initrepo"
	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/recipe/draft"
)

func newInitCmd() *Command {
	var (
		f   options.BuildFlags
		req draft.Request
	)
	return &Command{
		Use:     "init DIR (--chart REPO/NAME@VERSION | --manifest URL... --version V) [--name N] | kbuild init repo DIR",
		Summary: "Write a draft recipe for an upstream chart or manifests, with every pin filled in.",
		Help: `init downloads the upstream chart or manifests, pins them (the sha256 of each
file, the archive digest of a chart), takes the description and home page
from Chart.yaml, renders the charts with Helm's engine to list the CRDs they
ship into package.crds and every image they run into package.images, each
resolved to its digest in its registry (an image without a tag is
IMAGE:latest). Plain manifests that carry a Namespace get exclude:
[{kind: Namespace}] (the installer creates the release namespace). The draft has build: 1, rollback: {safe: false} to be
reviewed, and a default variant with one component per chart in namespace
NAME. init checks the draft with the full validation, rendering included,
before it ends; review every line before publishing it.

An image whose digest cannot be looked up (no access to its registry) does
not stop init: it is written with its tag and a "# TODO: pin" comment, which
validate reports, and init ends with a warning naming each such image and
the command that pins them later (kbuild images DIR --write); it exits 0.
--plain-http reaches loopback registries only (and --plain-http-host the
hosts named); the public registries of a chart's images are always HTTPS.

REPO is an https:// chart repository or an oci:// registry path; the pins are
taken on first use, so check them against what upstream publishes. With
--offline the pins come from the cache: a chart of an https:// repository
from the index.yaml and archive an earlier init cached, an oci:// chart and
a --manifest URL from the digest an earlier init (or kbuild fetch of a
recipe pinning them) recorded. Images are then written to pin later.

'kbuild init repo DIR' starts a recipes repository instead: recipes/,
suites.yaml (unstable, served at the site root), KEYS.md (the signing key:
make it, commit the public half, store the private half as the secret
KBUILD_SIGN_KEY), .gitignore and three workflows that call kbuild's
reusable workflows at this kbuild's release: pr (validate, build into a
throwaway registry, the diff in the job summary), publish (GHCR and GitHub
Pages) and promote. It overwrites nothing.

Examples:
  # a new recipes repository
  kbuild init repo packages && cd packages && kbuild repo keygen keys/index

  # a chart from a Helm repository
  kbuild init recipes/redis --chart https://charts.example.com/redis@7.2.4

  # a chart from an OCI registry
  kbuild init recipes/podinfo --chart oci://ghcr.io/stefanprodan/charts/podinfo@6.7.1

  # no access to the image registries here: draft now, pin the images later
  kbuild init recipes/redis --chart https://charts.example.com/redis@7.2.4
  kbuild images recipes/redis --write

  # release manifests, wrapped into a chart
  kbuild init recipes/kubevirt --version 1.9.0 \
    --manifest https://github.com/kubevirt/kubevirt/releases/download/v1.9.0/kubevirt-operator.yaml`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&req.Chart, "chart", "", "upstream chart as REPO/NAME@VERSION")
			fs.StringArrayVar(&req.Manifests, "manifest", nil, "URL of an upstream manifest file (repeat for several)")
			fs.StringVar(&req.Version, "version", "", "upstream version, for --manifest (default: the chart's version)")
			fs.StringVar(&req.Name, "name", "", "package name (default: the chart's name, or the first manifest's file name)")
			fs.StringVar(&req.Namespace, "namespace", "", "install namespace of the components (default: the package name)")
			f.AddPrepareFlags(fs)
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) == 2 && args[0] == "repo" {
				if req.Chart != "" || len(req.Manifests) > 0 {
					return usagef("init repo DIR takes no --chart or --manifest")
				}
				files, err := initrepo.Write(args[1], actionRef())
				if err != nil {
					return err
				}
				for _, f := range files {
					fmt.Fprintln(env.Stdout, filepath.Join(args[1], filepath.FromSlash(f)))
				}
				fmt.Fprintf(env.Stderr, "next: kbuild repo keygen %s, then follow %s\n", filepath.Join(args[1], "keys", "index"), filepath.Join(args[1], "KEYS.md"))
				return nil
			}
			if len(args) != 1 {
				return usagef("name the directory to write the recipe into")
			}
			if (req.Chart == "") == (len(req.Manifests) == 0) {
				return usagef("give either --chart or --manifest")
			}
			f.Jobs = 1
			lenient, err := f.Builder(env, thisKbuild(), nil, "", builder.WithUnpinnedImages(true))
			if err != nil {
				return err
			}
			strict, err := f.Builder(env, thisKbuild(), nil, "")
			if err != nil {
				return err
			}
			res, err := draft.Write(ctx, args[0], req, draft.Tools{Fetcher: lenient.Fetcher(), Lenient: lenient, Strict: strict})
			var re *draft.RequestError
			if errors.As(err, &re) {
				return usagef("%v", withHint(err))
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "wrote %s; review it, then run: kbuild validate %s\n", res.File, args[0])
			if todo := res.Unpinned; len(todo) > 0 {
				fmt.Fprintf(env.Stderr, "warning: %d images are not pinned (marked # TODO: pin), their digests could not be looked up:\n  %s\npin them where their registries can be reached: kbuild images %s --write\n",
					len(todo), strings.Join(todo, "\n  "), args[0])
			}
			return nil
		},
	}
}
