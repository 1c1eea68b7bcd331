package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/sbom"
	"kbuild.dev/kbuild/siteread"
)

func newSBOMCmd() *Command {
	var (
		a        = &publish.SBOM{Options: []sbom.Option{sbom.WithTool("kbuild", version)}}
		out      string
		contents bool
		tf       options.TrivyFlags
		it       options.IndexFlags
	)
	return &Command{
		Use:     "sbom (DIST | --index REF (--public-key FILE | --root-key FILE)) [PACKAGE[@VERSION]...] -o FILE [--with-image-contents] [--trivy PATH]",
		Summary: "Write a CycloneDX 1.6 SBOM of built or published packages.",
		Help: `Reads the build records of a dist directory (kbuild build -o DIST), or the
published index --index (a site directory, index.yaml or http(s) URL) —
verified first, as a subscriber does, with --public-key or --root-key — and
writes one CycloneDX 1.6 JSON BOM of
every package in it, or of the PACKAGEs named (all their versions, or the one
VERSION). Naming exactly one build writes that build's BOM, with the package
as the BOM's subject. The BOM lists each package, the charts it installs, the
images it runs and the upstream sources of each build with their sha256
(from the BuildInfo sidecars: beside each record in DIST, under build/ beside
the index), and how they depend on each other.

The same input gives the same bytes: the timestamp is SOURCE_DATE_EPOCH, or
the index's generated time; without either it is left out.

--with-image-contents lists what is inside every image pinned by digest (OS
and language packages) with Trivy, offline: it needs no vulnerability
database, only the registry that holds the images. A package named that is
not in the input is an error that lists what is.

Examples:
  # the SBOM of everything in dist/
  kbuild sbom dist -o sbom.cdx.json

  # one build of a published repository
  kbuild sbom --index https://charts.example.com/index.yaml kubevirt@1.9.0 -o kubevirt.cdx.json \
    --public-key keys/index.pub

  # with the packages inside the images, as Trivy sees them
  kbuild sbom dist --with-image-contents --trivy ~/go/bin/trivy -o sbom.cdx.json`,
		Flags: func(fs *pflag.FlagSet) {
			options.AddOutputFlag(fs, &out, "", "the BOM to `FILE` (- for stdout); required")
			fs.BoolVar(&contents, "with-image-contents", false, "nest each pinned image's contents as Trivy lists them")
			tf.AddFlags(fs)
			it.AddFlags(fs, "to describe instead of a DIST")
			options.AddTimeoutFlag(fs, &a.Timeout, "the index's site")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if err := selectBuilds(env, "kbuild sbom", &it, args, &a.Selection); err != nil {
				return err
			}
			if out == "" {
				return usagef("-o FILE is required")
			}
			var err error
			if strings.TrimSpace(env.Getenv("SOURCE_DATE_EPOCH")) != "" {
				if a.Timestamp, err = builder.SourceDateEpoch(env.Getenv); err != nil {
					return err
				}
			}
			if contents {
				t, err := tf.Trivy()
				if err != nil {
					return err
				}
				a.Options = append(a.Options, sbom.WithImageContents(t))
			}
			res, err := a.Run(ctx)
			if err := readWarnings(env, res.Warnings, err); err != nil {
				return err
			}
			return writeOutput(env, out, res.Data)
		},
	}
}

// writeOutput writes data to file atomically, or to stdout for "-", and
// names the file on stdout.
func writeOutput(env *Env, file string, data []byte) error {
	if file == "-" {
		_, err := env.Stdout.Write(data)
		return err
	}
	if err := atomicfile.WriteFile(file, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	fmt.Fprintln(env.Stdout, file)
	return nil
}

// selectBuilds sets what sbom and scan read: --index REF with its keys,
// or the first argument, and the PACKAGE arguments. An index given as the
// first argument is the old spelling of --index: it still works, with a
// notice.
func selectBuilds(env *Env, cmd string, it *options.IndexFlags, args []string, s *publish.Selection) error {
	switch {
	case it.Ref != "":
		s.Source, s.AsIndex, s.Packages = it.Ref, true, args
	case len(args) == 0:
		return usagef("expected DIST, or --index REF")
	default:
		if fi, err := os.Stat(args[0]); err != nil || !fi.IsDir() {
			fmt.Fprintf(env.Stderr, "warning: %s: an index as the first argument is deprecated and goes away in the next release; use --index %s\n", cmd, args[0])
		}
		s.Source, s.Packages = args[0], args[1:]
	}
	var err error
	s.Trust, err = it.Trust()
	return err
}

// readWarnings prints the warnings of reading builds (publish.SBOM,
// publish.Scan, with the images a scan skipped) and returns err, an index
// that needs keys as a usage error.
func readWarnings(env *Env, warnings []string, err error) error {
	if errors.Is(err, siteread.ErrUnverified) {
		return usagef("%v", withHint(err))
	}
	for _, w := range warnings {
		env.Warnf("warning: %s", w)
	}
	return err
}
