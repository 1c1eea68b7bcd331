package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/sbom"
)

func newSBOMCmd() *Command {
	var (
		out      string
		contents bool
		tf       trivyFlags
		it       indexTrust
	)
	return &Command{
		Name:    "sbom",
		Usage:   "kbuild sbom DIST|INDEX [PACKAGE[@VERSION]...] -o FILE [--public-key FILE] [--with-image-contents] [--trivy PATH]",
		Summary: "Write a CycloneDX 1.6 SBOM of built or published packages.",
		Help: `Reads the build records of a dist directory (kbuild build -o DIST), or an
index.yaml by path or http(s) URL — verified first, as a subscriber does,
with --public-key or --root-key — and writes one CycloneDX 1.6 JSON BOM of
every package in it, or of the PACKAGEs named (all their versions, or the one
VERSION). Naming exactly one build writes that build's BOM, with the package
as the BOM's subject. The BOM lists each package, the charts it installs, the
images it runs and the upstream sources of each build with their sha256
(from the BuildInfo sidecars: beside each record in DIST, under build/ beside
an INDEX), and how they depend on each other.

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
  kbuild sbom https://charts.example.com/index.yaml kubevirt@1.9.0 -o kubevirt.cdx.json \
    --public-key keys/index.pub

  # with the packages inside the images, as Trivy sees them
  kbuild sbom dist --with-image-contents --trivy ~/go/bin/trivy -o sbom.cdx.json`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVarP(&out, "output", "o", "", "write the BOM to FILE (- for stdout); required")
			fs.BoolVar(&contents, "with-image-contents", false, "nest each pinned image's contents as Trivy lists them")
			tf.addFlags(fs)
			it.addFlags(fs)
			it.addTimeout(fs)
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) == 0 {
				return usagef("expected DIST or INDEX")
			}
			if out == "" {
				return usagef("-o FILE is required")
			}
			trust, err := it.trust()
			if err != nil {
				return err
			}
			in, err := loadBuilds(ctx, env, args[0], true, trust, it.timeout)
			if err != nil {
				return err
			}
			builds, err := in.Select(args[1:])
			if err != nil {
				return err
			}
			opts := []sbom.Option{sbom.WithTool("kbuild", version)}
			ts, err := buildsTime(env, in)
			if err != nil {
				return err
			}
			opts = append(opts, sbom.WithTimestamp(ts))
			if contents {
				t, err := tf.trivy(false)
				if err != nil {
					return err
				}
				opts = append(opts, sbom.WithImageContents(t))
			}
			var bom *cdx.BOM
			if len(args) > 1 && len(builds) == 1 {
				bom, err = sbom.ForBuild(ctx, builds[0], opts...)
			} else {
				bom, err = sbom.ForRepository(ctx, in.Name, builds, opts...)
			}
			if err != nil {
				return err
			}
			data, err := sbom.Marshal(bom)
			if err != nil {
				return err
			}
			return writeOutput(env, out, data)
		},
	}
}

// trivyFlags are the flags of the commands that run Trivy.
type trivyFlags struct {
	path     string
	cacheDir string
}

func (f *trivyFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.path, "trivy", "", "the trivy program (default: trivy on PATH)")
	fs.StringVar(&f.cacheDir, "cache-dir", "", "Trivy's cache directory, where its vulnerability DB is (default: Trivy's, ~/.cache/trivy)")
}

func (f *trivyFlags) trivy(offline bool) (*sbom.Trivy, error) {
	opts := []sbom.TrivyOption{sbom.WithTrivyOffline(offline)}
	if f.path != "" {
		opts = append(opts, sbom.WithTrivyPath(f.path))
	}
	if f.cacheDir != "" {
		opts = append(opts, sbom.WithTrivyCacheDir(f.cacheDir))
	}
	return sbom.NewTrivy(opts...)
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

// indexTrust are the flags that verify an index read by sbom, scan, diff
// and plan, and how long its site may send nothing (--timeout).
type indexTrust struct {
	publicKeys, rootKeys []string
	timeout              time.Duration
}

// addTimeout adds --timeout, for the commands that have no source flags.
func (f *indexTrust) addTimeout(fs *pflag.FlagSet) {
	fs.DurationVar(&f.timeout, "timeout", netdeadline.DefaultIdle, "give up on the INDEX's site when it sends nothing for this long")
}

func (f *indexTrust) addFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.publicKeys, "public-key", nil, "with an INDEX: public key trusted to sign it; repeat for several")
	fs.StringArrayVar(&f.rootKeys, "root-key", nil, "with an INDEX: pinned root public key, to verify it under its root of trust")
}

// trust returns what verifies an index, nil when no key is given.
func (f *indexTrust) trust() (*index.Trust, error) {
	if len(f.publicKeys) == 0 && len(f.rootKeys) == 0 {
		return nil, nil
	}
	if len(f.publicKeys) > 0 && len(f.rootKeys) > 0 {
		return nil, usagef("give --public-key or --root-key, not both")
	}
	return index.LoadTrust(f.publicKeys, 0, f.rootKeys, 0)
}

// loadBuilds reads the builds of src (see publish.LoadBuilds) and prints
// the warnings of verifying an index.
func loadBuilds(ctx context.Context, env *Env, src string, infos bool, trust *index.Trust, timeout time.Duration) (*publish.Builds, error) {
	in, err := publish.LoadBuilds(ctx, src, trust, publish.BuildsOptions{BuildInfo: infos, Timeout: timeout})
	if errors.Is(err, publish.ErrUnverified) {
		return nil, usagef("%v", err)
	}
	if err != nil {
		return nil, err
	}
	for _, w := range in.Warnings {
		env.Warnf("warning: %s", w)
	}
	return in, nil
}

// buildsTime is SOURCE_DATE_EPOCH when set, else the index's generated
// time, else zero (no timestamp).
func buildsTime(env *Env, in *publish.Builds) (time.Time, error) {
	if strings.TrimSpace(env.Getenv("SOURCE_DATE_EPOCH")) != "" {
		return builder.SourceDateEpoch(env.Getenv)
	}
	return in.Generated, nil
}
