package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/options"
)

func newFetchCmd() *Command {
	var f options.BuildFlags
	return &Command{
		Use:     "fetch DIR...",
		Summary: "Download and verify recipes' sources into the cache without building.",
		Help: `fetch resolves every source of each recipe (url, chart, git, image, plugin),
verifies it against its pin and stores it in the content-addressed cache, so
that a later 'kbuild build --offline' needs no network. CI jobs run it before
saving the cache directory (e.g. with actions/cache keyed on the recipes'
pins). It prints one line per source: recipe, source, digest and origin.

Examples:
  # fill the default cache (~/.cache/kbuild) for every recipe
  kbuild fetch recipes/

  # fill a cache directory that CI saves and restores
  kbuild fetch --cache-dir .cache/kbuild recipes/kubevirt`,
		Flags: func(fs *pflag.FlagSet) {
			f.SourceFlags.AddFlags(fs)
			f.JobsFlag.AddFlags(fs, "sources fetched")
		},
		Args: minArgs(1, "name at least one recipe directory"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			dirs, b, err := f.RecipesBuilder(env, thisKbuild(), nil, args)
			if err != nil {
				return err
			}
			if b.FetchAll(ctx, env.Stdout, env.Stderr, dirs, withHint) > 0 {
				return &exitError{Code: 1}
			}
			return nil
		},
	}
}

func newCacheCmd() *Command {
	var f options.SourceFlags
	var origin string
	return &Command{
		Use:     "cache add FILE...",
		Summary: "Seed the source cache from local files.",
		Subcommands: []*Command{{
			Use:     "add [--url URL] FILE...",
			Summary: "Store local files in the source cache under their sha256.",
			Help: `cache add copies each FILE into the content-addressed cache and prints its
sha256. A recipe whose url source pins that digest then builds with
--offline, exactly as if the file had been downloaded: the pin is what is
verified, not where the bytes came from.

Examples:
  # seed the cache with a release asset downloaded by other means
  kbuild cache add kubevirt-operator.yaml

  # then build from the cache alone
  kbuild build --offline recipes/kubevirt

  # say where it came from, so that drafting a recipe offline pins it
  kbuild cache add --url https://github.com/kubevirt/kubevirt/releases/download/v1.9.0/kubevirt-operator.yaml kubevirt-operator.yaml
  kbuild init recipes/kubevirt --offline --manifest https://github.com/kubevirt/kubevirt/releases/download/v1.9.0/kubevirt-operator.yaml --version 1.9.0`,
			Flags: func(fs *pflag.FlagSet) {
				f.AddFlags(fs)
				fs.StringVar(&origin, "url", "", "the http(s) `URL` FILE was downloaded from: recorded, so that a url source of it is pinned offline (one FILE only)")
			},
			Args: minArgs(1, "name at least one file"),
			Run: func(ctx context.Context, env *Env, args []string) error {
				fe, err := f.Fetcher(env)
				if err != nil {
					return err
				}
				if origin != "" && len(args) != 1 {
					return usagef("--url names the origin of one file; got %d files", len(args))
				}
				for _, a := range args {
					d, err := fe.AddFrom(ctx, a, origin)
					if err != nil {
						return fmt.Errorf("%s: %w", a, err)
					}
					fmt.Fprintf(env.Stdout, "%s %s\n", d, a)
				}
				return nil
			},
		}},
	}
}
