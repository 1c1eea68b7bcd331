package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/bundle"
)

type bundleInspectFlags struct{ format formatFlag }

func newBundleInspectCmd() *Command {
	f := &bundleInspectFlags{}
	return &Command{
		Name:    "inspect",
		Usage:   "kbuild bundle inspect FILE [--format json]",
		Summary: "Say what a bundle holds: when it was made, packages, charts, images and who pins them.",
		Help: `Reads FILE, hashing every blob, and prints when it was made, the package
versions, every chart and every image with its digest and the versions that
pin it, as the bundled index says (not bundle.json). Inspect has no keys, so
it cannot tell a genuine index from a forged one: 'kbuild bundle import'
verifies.

Examples:
  # a summary
  kbuild bundle inspect virt.tar

  # every image digest, for a review or a script
  kbuild bundle inspect virt.tar --format json | jq -r '.images[].ref'`,
		Flags: func(fs *pflag.FlagSet) {
			f.format.addFlags(fs, true, "text", "json")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) != 1 {
				return usagef("inspect takes one FILE")
			}
			if err := f.format.check(); err != nil {
				return err
			}
			in, err := bundle.Inspect(ctx, args[0])
			if err != nil {
				return refusal(env, err)
			}
			if f.format.format == "json" {
				b, err := json.MarshalIndent(in, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(env.Stdout, "%s\n", b)
				return nil
			}
			w := env.Stdout
			fmt.Fprintf(w, "created: %s\nindex: %s (generated %s", in.Created.Format(time.RFC3339), in.Index, in.Generated)
			if in.Expires != "" {
				fmt.Fprintf(w, ", expires %s", in.Expires)
			}
			fmt.Fprintf(w, ")\n")
			for _, s := range in.SignedBy {
				switch {
				case s.Checked:
					fmt.Fprintf(w, "index signed by %s (%s, carried in the bundle; import checks the signature against your keys)\n", s.KeyID, s.KeyFile)
				case s.KeyID != "":
					fmt.Fprintf(w, "index signed by %s, as index.yaml.sig says (the bundle carries no such key; import checks it against your keys)\n", s.KeyID)
				default:
					fmt.Fprintf(w, "index signed by a key the bundle does not carry (index.yaml.sig names no keyid); import checks it against your keys\n")
				}
			}
			fmt.Fprintf(w, "cosign signatures and attestations of the charts: %d\n", in.Sigstore)
			fmt.Fprintf(w, "%d blobs, %s\n\npackages:\n", in.Blobs, humanBytes(in.Bytes))
			for _, p := range in.Packages {
				fmt.Fprintf(w, "  %s %s build %d  %s  (%s)\n", p.Name, p.Version, p.Build, p.Digest, p.Reason)
			}
			fmt.Fprintf(w, "charts:\n")
			for _, c := range in.Charts {
				fmt.Fprintf(w, "  oci://%s  archive %s  pinned by %s\n", c.Ref, c.Digest, pinnedBy(c.PinnedBy))
			}
			fmt.Fprintf(w, "images:\n")
			for _, im := range in.Images {
				extra := ""
				if len(im.Platforms) > 0 {
					extra = " platforms " + strings.Join(im.Platforms, ",")
				}
				fmt.Fprintf(w, "  %s  %s%s  pinned by %s\n", im.Ref, humanBytes(im.Size), extra, pinnedBy(im.PinnedBy))
			}
			return nil
		},
	}
}

func pinnedBy(who []string) string {
	if len(who) == 0 {
		return "NOTHING in the bundled index (import will refuse it)"
	}
	return strings.Join(who, ", ")
}
