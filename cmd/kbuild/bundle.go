package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/bundle"
	"kbuild.dev/kbuild/bundle/nodeconfig"
	"kbuild.dev/kbuild/index"
)

func newBundleCmd() *Command {
	return &Command{
		Name:    "bundle",
		Usage:   "kbuild bundle COMMAND",
		Summary: "Air-gap bundles: the signed index, charts and images in one verified file.",
		Help: `A bundle is one file, an OCI image layout in a tar (skopeo, crane and oras
read it), holding a signed index.yaml with its signature and root chain, the
charts and every pinned image of the chosen package versions, and their
SBOMs and provenance. 'create' makes it where the internet is, 'import'
verifies it with keys you carry separately and fills a mirror registry
inside the air gap.`,
		Subcommands: []*Command{newBundleCreateCmd(), newBundleInspectCmd(), newBundleImportCmd()},
	}
}

type bundleCreateFlags struct {
	indexFlags
	plainHTTPFlag
	timeoutFlag
	out         string
	platforms   []string
	imageSource string
}

func newBundleCreateCmd() *Command {
	f := &bundleCreateFlags{}
	return &Command{
		Name:    "create",
		Usage:   "kbuild bundle create PACKAGE[@CONSTRAINT]... --index REF (--public-key FILE... | --root-key FILE... [--root-threshold N]) -o FILE [--platform OS/ARCH...]",
		Summary: "Write one bundle file with the packages, everything they require, their charts and images.",
		Help: `Verifies the index exactly as 'kbuild repo verify' does, then chooses for
each PACKAGE the newest version satisfying CONSTRAINT and, the same way,
every package its variants require (meta packages included; optional ones
when the index has them). Every chart and image those versions pin is
streamed from its registry into FILE with its digest checked; multi-platform
images are kept whole unless --platform picks some (the index itself is
kept, so its pinned digest still verifies, but a mirror that requires every
image an index names, as docker-registry does, refuses it). FILE is written to a temporary
file and renamed. The same index and packages give the same bytes: the
bundle's time is SOURCE_DATE_EPOCH, else the index's generated time.

The mistake to avoid: a bundle verified with keys that travel inside it
proves nothing; carry the public keys to the air gap separately.

Examples:
  # KubeVirt with CDI, for every platform
  kbuild bundle create virtualization --index https://example.github.io/packages/ --public-key keys/index.pub -o virt.tar

  # an exact version, amd64 images only
  kbuild bundle create kubevirt@1.9.0 --index _site --public-key keys/index.pub --platform linux/amd64 -o kubevirt.tar

  # read the images from a mirror filled by an earlier import
  kbuild bundle create cdi@~1.66 --index _site --root-key keys/root.pub --image-source oci://mirror.local/airgap -o cdi.tar`,
		Flags: func(fs *pflag.FlagSet) {
			f.indexFlags.addFlags(fs, "to bundle packages of (required)")
			addOutputFlag(fs, &f.out, "", "the bundle to `FILE` (required)")
			fs.StringArrayVar(&f.platforms, "platform", nil, "keep only this platform of multi-platform images (os/arch[/variant]); repeat for several")
			fs.StringVar(&f.imageSource, "image-source", "", "pull images from oci://HOST/PATH/<registry>/<repository> instead of their registries")
			f.plainHTTPFlag.addFlags(fs, "")
			f.timeoutFlag.addFlags(fs, "the site, or a registry that does not start answering,")
		},
		Run: f.run,
	}
}

func (f *bundleCreateFlags) run(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || f.ref == "" || f.out == "" {
		return usagef("create needs PACKAGE..., --index and -o")
	}
	trust, err := f.require("create")
	if err != nil {
		return err
	}
	var wants []bundle.Want
	for _, a := range args {
		w, err := bundle.ParseWant(a)
		if err != nil {
			return usagef("%v", err)
		}
		wants = append(wants, w)
	}
	opts := []bundle.Option{bundle.WithPlainHTTP(f.plainHTTP), bundle.WithTimeout(f.timeout), bundle.WithPlatforms(f.platforms...), bundle.WithImageSource(f.imageSource),
		bundle.WithLogger(func(format string, a ...any) { fmt.Fprintf(env.Stderr, format+"\n", a...) }), bundle.WithProgress(progressBar(env))}
	if env.Getenv("SOURCE_DATE_EPOCH") != "" {
		t, err := epochOrNow(env)
		if err != nil {
			return err
		}
		opts = append(opts, bundle.WithEpoch(t))
	}
	c, err := bundle.Create(ctx, f.out, f.ref, trust, wants, opts...)
	if err != nil {
		return refusal(env, err)
	}
	for _, p := range c.Packages {
		fmt.Fprintf(env.Stdout, "%s %s build %d (%s)\n", p.Name, p.Version, p.Build, p.Reason)
	}
	var size int64
	for _, im := range c.Images {
		size += im.Size
	}
	fmt.Fprintf(env.Stderr, "wrote %s: %d packages, %d charts, %d images (%s of image data)\n", f.out, len(c.Packages), len(c.Charts), len(c.Images), humanBytes(size))
	return nil
}

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
			fmt.Fprintf(w, ")\n%d blobs, %s\n\npackages:\n", in.Blobs, humanBytes(in.Bytes))
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

type bundleImportFlags struct {
	trustFlags
	plainHTTPFlag
	timeoutFlag
	mirror     string
	site       string
	nodeConfig string
	resign     signerFlags
}

func newBundleImportCmd() *Command {
	f := &bundleImportFlags{}
	return &Command{
		Name:    "import",
		Usage:   "kbuild bundle import FILE (--public-key FILE... | --root-key FILE...) --mirror oci://HOST/PATH --site DIR [--node-config DIR] [--sign-key FILE]",
		Summary: "Verify a bundle with your keys, push it into a mirror and write the site and node settings.",
		Help: `Trusts only the keys given here, never anything in the bundle. Verifies
the bundled index as a subscriber does, then every chart and image blob
against the digests the signed index pins and every provenance file against
the index keys, and pushes nothing until all of it passed (SBOMs are not
signed: they are copied as information). An index older than the one DIR
already holds is refused as a rollback.

Then pushes each chart and image to HOST/PATH/<registry>/<repository> (blobs
the mirror has are skipped, blobs pushed to another repository are mounted),
writes DIR with the upstream-signed index unchanged plus mirror.json (where
each chart and image now lives), and with --node-config writes containerd
certs.d/<registry>/hosts.toml files, a Talos machine-config patch and a
CRI-O registries.conf.d drop-in that make nodes pull the pinned digests from
the mirror. With --sign-key it also writes DIR/mirror/index.yaml, the
bundled versions with chart references at the mirror, signed by your own
key, for sites that run their own root of trust.

Exit status: 0 imported, 1 refused (nothing was pushed), 3 the mirror or
site could not be written.

Examples:
  # verify and import, with the node settings
  kbuild bundle import virt.tar --public-key keys/index.pub --mirror oci://registry.airgap.local/upstream --site /srv/packages --node-config nodes/

  # under a root of trust, into a loopback registry
  kbuild bundle import virt.tar --root-key root1.pub --root-key root2.pub --root-threshold 2 --mirror oci://127.0.0.1:5000/mirror --site _site --plain-http

  # also publish an index signed by the site's own key, charts at the mirror
  kbuild bundle import virt.tar --public-key keys/index.pub --mirror oci://registry.airgap.local/upstream --site /srv/packages --sign-key keys/local.key`,
		Flags: func(fs *pflag.FlagSet) {
			f.trustFlags.addFlags(fs)
			fs.StringVar(&f.mirror, "mirror", "", "mirror registry and path, oci://HOST/PATH (required)")
			fs.StringVar(&f.site, "site", "", "site directory `DIR` to write the index, its signature and mirror.json to (required)")
			fs.StringVar(&f.nodeConfig, "node-config", "", "directory `DIR` to write containerd, Talos and CRI-O settings to")
			f.resign.addFlags(fs, "DIR/mirror/index.yaml, the index with chart references at the mirror")
			addAlias(fs, "resign-key", "", "sign-key")
			f.plainHTTPFlag.addFlags(fs, "for the mirror, and node settings then use http://")
			f.timeoutFlag.addFlags(fs, "a mirror registry that does not start answering")
		},
		Run: f.run,
	}
}

func (f *bundleImportFlags) run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 || f.mirror == "" || f.site == "" {
		return usagef("import needs FILE, --mirror and --site")
	}
	trust, err := f.require("import")
	if err != nil {
		return err
	}
	opts := []bundle.Option{bundle.WithPlainHTTP(f.plainHTTP), bundle.WithTimeout(f.timeout), bundle.WithProgress(progressBar(env))}
	signers, err := f.resign.signers(env)
	if err != nil {
		return err
	}
	if len(signers) > 0 {
		opts = append(opts, bundle.WithResignKey(signers...))
	}
	res, err := bundle.Import(ctx, args[0], trust, f.mirror, f.site, opts...)
	if err != nil {
		return refusal(env, err)
	}
	for _, w := range res.Verified.Warnings {
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	fmt.Fprintf(env.Stderr, "verified and pushed %d charts and %d images to %s; wrote %s\n", len(res.Locations.Charts), len(res.Locations.Images), f.mirror, f.site)
	if f.nodeConfig != "" {
		host, path, _ := strings.Cut(strings.TrimPrefix(strings.TrimSuffix(f.mirror, "/"), "oci://"), "/")
		paths, err := nodeconfig.Write(f.nodeConfig, nodeconfig.Mirror{Host: host, Path: path, PlainHTTP: f.plainHTTP}, res.Registries)
		if err != nil {
			return err
		}
		for _, p := range paths {
			fmt.Fprintf(env.Stderr, "wrote %s\n", p)
		}
	}
	fmt.Fprintf(env.Stdout, "index: %s/index.yaml (signed upstream; subscribe with the same keys)\n", strings.TrimSuffix(f.site, "/"))
	fmt.Fprintf(env.Stdout, "charts and images: %s\n", f.mirror)
	if len(signers) > 0 {
		fmt.Fprintf(env.Stdout, "index with charts at the mirror: %s/%s/index.yaml (signed by --sign-key)\n", strings.TrimSuffix(f.site, "/"), bundle.ResignDir)
	}
	if f.nodeConfig != "" {
		fmt.Fprintf(env.Stdout, "node settings: %s (containerd certs.d, Talos patch, CRI-O drop-in)\n", f.nodeConfig)
	}
	return nil
}

// refusal prints a verification refusal or bad bundle and exits 1; other
// errors (registry, files) exit 3.
func refusal(env *Env, err error) error {
	var ve *index.VerificationError
	if errors.As(err, &ve) || errors.Is(err, bundle.ErrBadBundle) {
		fmt.Fprintf(env.Stderr, "refused: %v\n", err)
		return &exitError{code: 1}
	}
	var ue *usageError
	if errors.As(err, &ue) {
		return err
	}
	fmt.Fprintf(env.Stderr, "error: %v\n", err)
	return &exitError{code: exitFetch}
}

// progressBar draws a bar when stderr is a terminal and prints one line
// per artifact elsewhere (CI logs).
func progressBar(env *Env) func(bundle.Progress) {
	tty := false
	if f, ok := env.Stderr.(*os.File); ok && env.Getenv("CI") == "" {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return progressTo(env.Stderr, tty)
}

// progressTo reports progress on w: a bar redrawn in place on a terminal,
// else a line when the artifact changes.
func progressTo(w io.Writer, tty bool) func(bundle.Progress) {
	last := ""
	return func(p bundle.Progress) {
		if tty {
			pct := 100
			if p.Total > 0 {
				pct = int(p.Done * 100 / p.Total)
			}
			bar := strings.Repeat("#", pct/4) + strings.Repeat(" ", 25-pct/4)
			fmt.Fprintf(w, "\r[%s] %3d%% %s / %s %-50.50s", bar, pct, humanBytes(p.Done), humanBytes(p.Total), p.Artifact)
			if p.Artifact == "" {
				fmt.Fprintln(w)
			}
			return
		}
		if p.Artifact != "" && p.Artifact != last {
			last = p.Artifact
			fmt.Fprintf(w, "copying %s (%s of %s done)\n", p.Artifact, humanBytes(p.Done), humanBytes(p.Total))
		}
	}
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
