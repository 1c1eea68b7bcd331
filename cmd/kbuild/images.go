package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/cmd/kbuild/options"
)

func newImagesCmd() *Command {
	var (
		f     options.BuildFlags
		write bool
	)
	return &Command{
		Use:     "images DIR [--write]",
		Summary: "Print the images a recipe's charts run, pinned by digest, as a package.images block.",
		Help: `images renders every chart of the recipe with Helm's engine (default values,
CRDs included), collects every image the objects run (containers,
initContainers, ephemeralContainers, *_IMAGE environment variables and
image fields of operator resources), resolves each tag to its digest in its
registry, and prints a ready-to-paste images: block. Credentials come from
the Docker config.

Every image the recipe already declares is kept, pinned if it is not yet,
whether or not a chart renders it: operators deploy images no chart names
(KubeVirt's operator starts eight of the nine KubeVirt images). Each line
says which charts render the image, or that none does. With --write the
recipe's images: block is rewritten in place instead: changed entries are
replaced on their line, new ones appended, every comment kept (a recipe
without a one-entry-a-line images: list gets the block printed to paste).

An image whose digest cannot be looked up (no network, a private registry)
is printed unpinned with a TODO comment, and images exits 1 naming it.
Plain HTTP (--plain-http) is used for registries on loopback only, and for
the hosts given with --plain-http-host; never for public registries.

Examples:
  # print the block for a recipe, then paste it under spec.package
  kbuild images recipes/kubevirt

  # pin the recipe's images in place
  kbuild images recipes/cdi --write

  # against a registry on loopback
  kbuild images --plain-http examples/hello`,
		Flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&write, "write", false, "rewrite the recipe's images: block in place, keeping its comments")
			f.AddPrepareFlags(fs)
		},
		Args: exactArgs(1, "name one recipe directory"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			f.Jobs = 1
			b, err := f.Builder(env, thisKbuild(), nil, "")
			if err != nil {
				return err
			}
			res, err := b.PinImages(ctx, args[0], write)
			if res == nil {
				return err
			}
			res.WriteText(env.Stdout)
			if errors.Is(err, builder.ErrUnpinned) {
				return fmt.Errorf("%w\nrun kbuild images %s --write where their registries can be reached", err, args[0])
			}
			return err
		},
	}
}
