package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/recipe"
	"kbuild.dev/kbuild/internal/netdeadline"
)

func newImagesCmd() *Command {
	var f buildFlags
	return &Command{
		Name:    "images",
		Usage:   "kbuild images DIR",
		Summary: "Print the images a recipe's charts run, pinned by digest, as a package.images block.",
		Help: `images renders every chart of the recipe with Helm's engine (default values,
CRDs included), collects every image the objects run (containers,
initContainers, ephemeralContainers, *_IMAGE environment variables and
image fields of operator resources), resolves each tag to its digest in its
registry, and prints a ready-to-paste images: block. Images already pinned in
the recipe keep their digest. Credentials come from the Docker config.

Examples:
  # print the block for a recipe, then paste it under spec.package
  kbuild images recipes/kubevirt

  # against a registry on loopback
  kbuild images --plain-http examples/hello`,
		Flags: func(fs *pflag.FlagSet) { f.sourceFlags.addFlags(fs) },
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) != 1 {
				return usagef("name one recipe directory")
			}
			f.jobs = 1
			b, err := f.builder(env, nil, "")
			if err != nil {
				return err
			}
			l, err := builder.Load(args[0])
			if err != nil {
				return err
			}
			if l.Recipe == nil || !onlyUnpinned(l.Problems) {
				return l.Err()
			}
			p, err := b.PrepareLoaded(ctx, l)
			if p == nil {
				return err
			}
			seen := map[string]bool{}
			var pinned []string
			for _, c := range p.Charts {
				for _, img := range c.Rendered.Images {
					if seen[img] {
						continue
					}
					seen[img] = true
					pin, ok := builder.PinFor(img, l.Recipe.Spec.Package.Images)
					if !ok {
						if f.offline {
							return fmt.Errorf("image %s is not pinned and --offline forbids asking its registry", img)
						}
						if pin, err = resolveImage(ctx, img, f.plainHTTP, f.timeout); err != nil {
							return err
						}
					}
					pinned = append(pinned, pin)
				}
			}
			sort.Strings(pinned)
			pinned = dedupe(pinned)
			fmt.Fprintln(env.Stdout, "    images:")
			for _, p := range pinned {
				fmt.Fprintf(env.Stdout, "      - %s\n", p)
			}
			return nil
		},
	}
}

// resolveImage returns img in full form with its tag's current digest.
// Registry reads have the idle timeout idle (--timeout).
func resolveImage(ctx context.Context, img string, plainHTTP bool, idle time.Duration) (string, error) {
	opts := []name.Option{name.WeakValidation}
	if plainHTTP {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(img, opts...)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", img, err)
	}
	desc, err := remote.Head(ref, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain),
		remote.WithTransport(netdeadline.Transport(remote.DefaultTransport, idle)))
	if err != nil {
		return "", fmt.Errorf("image %s: resolving its digest: %w", img, err)
	}
	full := recipe.NormalizeImage(img)
	if _, ok := ref.(name.Digest); ok {
		return full, nil
	}
	return full + "@" + desc.Digest.String(), nil
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
