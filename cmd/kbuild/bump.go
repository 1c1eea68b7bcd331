package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/bump"
	"kbuild.dev/kbuild/review"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/watch"
)

func newBumpCmd() *Command {
	var (
		f       buildFlags
		it      indexFlags
		format  formatFlag
		version string
	)
	return &Command{
		Name:    "bump",
		Usage:   "kbuild bump RECIPE_DIR [--version VERSION] [--index REF (--public-key FILE | --root-key FILE)] [--format text|markdown]",
		Summary: "Move a recipe to a new upstream version: pins, digests and images verified, then validated and diffed.",
		Help: `bump reads the recipe's watch.yaml (docs/watch.md), takes the newest
upstream version the rule allows (or --version), and rewrites recipe.yaml in
place, every other line and comment kept byte for byte: each followed
source's URL, git commit or chart version with its digest, fetched and
verified; each followed image's tag, re-pinned by the digest it has now for
the rule's platform; spec.version set, spec.build reset to 1, and the
build:NAME@VERSION+build.N capability in provides renamed. Then it validates
the recipe and prints what the bump does to the rendered charts (as kbuild
diff does): against the published index with --index, else against the
recipe at git HEAD.

Nothing is written when upstream breaks a pin rule: a chart whose archive
differs from the digest its repository index lists, a release asset whose
download differs from the digest the release lists, an image tag with no
manifest for the platform. A recipe that does not validate after the edit
is put back. A bump to the version the recipe has changes nothing, unless
an upstream under also: moved (an operator's helper images on their own
release line): then what follows it is re-pinned, the version stays and
the build goes up by one.

A release set (a recipe whose requirements pin exact builds,
"=VERSION+build.N") has no watch.yaml: bump moves each pin and build
capability to the build its member's recipe beside it is at, once --index
(the published index, verified) holds every one of them; until then it
changes nothing and says which builds it waits for. The set takes its
members' version when they share one (build 1), else keeps its version and
raises its build; the new pins must resolve against the published index.

Examples:
  # to the newest version watch.yaml allows
  kbuild bump recipes/kubevirt

  # to a chosen version, the diff against what is published, for a PR body
  kbuild bump recipes/cdi --version 1.66.2 --format markdown \
    --index https://example.github.io/packages/ --public-key keys/index.pub

  # a release set, once its members' bumps are published
  kbuild bump recipes/foreman-stack --index https://example.github.io/packages/ --public-key keys/index.pub`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&version, "version", "", "upstream version to bump to (default: the newest the watch rule allows)")
			it.addFlags(fs, "to compare the bumped recipe with (default: the recipe at git HEAD)")
			format.addFlags(fs, false, "text", "markdown")
			f.sourceFlags.addFlags(fs)
			f.renderFlags.addFlags(fs)
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) != 1 {
				return usagef("name one recipe directory")
			}
			if err := format.check(); err != nil {
				return err
			}
			f.jobs = 1
			b, err := f.builder(env, nil, "")
			if err != nil {
				return err
			}
			fetch, err := f.fetcher(env)
			if err != nil {
				return err
			}
			kc, err := f.keychain()
			if err != nil {
				return err
			}
			bp := &bump.Bumper{
				Fetcher: fetch, Builder: b, Plain: f.plainPolicy(), KubeVersion: f.kubeVersion, Warnf: env.Warnf,
				Looker: watch.NewLooker(watch.WithTimeout(f.timeout), watch.WithOffline(f.offline), watch.WithKeychain(kc), watch.WithPlainHTTP(f.plainPolicy())),
			}
			if it.ref != "" {
				trust, err := it.trust()
				if err != nil {
					return err
				}
				if trust == nil {
					return usagef("--index REF needs --public-key FILE or --root-key FILE: a published index is compared with only once its signature is verified")
				}
				pub, err := siteread.ReadIndex(ctx, it.ref, trust, siteread.WithTimeout(f.timeout))
				if errors.Is(err, siteread.ErrNotFound) {
					return fmt.Errorf("%w; nothing is published there yet, so leave --index out to compare with git HEAD", err)
				}
				if err != nil {
					return err
				}
				bp.Index = pub.Verified.Index
			}
			res, err := bp.Bump(ctx, args[0], version)
			if err != nil {
				return err
			}
			if !res.Changed {
				if len(res.Waiting) > 0 {
					fmt.Fprintf(env.Stdout, "%s waits until its members' builds are published: %s; nothing changed\n", res.Dir, strings.Join(res.Waiting, ", "))
					return nil
				}
				fmt.Fprintf(env.Stdout, "%s is at %s already; nothing changed\n", res.Dir, res.To)
				return nil
			}
			if format.format == "markdown" {
				if res.Set {
					fmt.Fprintf(env.Stdout, "Bumps `%s` from %s to %s (build %d): the release set's members at their published builds, %s.\n\n", res.Package, res.From, res.To, res.Build, strings.Join(res.Members, ", "))
				} else if len(res.Also) > 0 {
					fmt.Fprintf(env.Stdout, "Bumps `%s` at %s to build %d: %s.\n\n", res.Package, res.To, res.Build, strings.Join(res.Also, ", "))
				} else {
					fmt.Fprintf(env.Stdout, "Bumps `%s` from %s to %s (build 1).\n\n", res.Package, res.From, res.To)
				}
				fmt.Fprintf(env.Stdout, "<details><summary>%d fields of %s changed</summary>\n\n```\n", len(res.Changes), res.File)
				for _, c := range res.Changes {
					fmt.Fprintln(env.Stdout, c)
				}
				fmt.Fprint(env.Stdout, "```\n</details>\n\n")
				return res.Report.WriteMarkdown(env.Stdout, review.WithCommand("kbuild diff "+res.Dir))
			}
			if res.Set {
				fmt.Fprintf(env.Stdout, "bumped release set %s from %s to %s build %d: %s\n", res.File, res.From, res.To, res.Build, strings.Join(res.Members, ", "))
			} else if len(res.Also) > 0 {
				fmt.Fprintf(env.Stdout, "bumped %s at %s to build %d: %s\n", res.File, res.To, res.Build, strings.Join(res.Also, ", "))
			} else {
				fmt.Fprintf(env.Stdout, "bumped %s from %s to %s\n", res.File, res.From, res.To)
			}
			for _, c := range res.Changes {
				fmt.Fprintf(env.Stdout, "  %s\n", c)
			}
			fmt.Fprintln(env.Stdout)
			return res.Report.WriteText(env.Stdout)
		},
	}
}
