package main

import (
	"cmp"
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/sbom"
)

func newScanCmd() *Command {
	var (
		a      = &publish.Scan{FailOn: publish.NoThreshold}
		failOn string
		jobs   options.JobsFlag
		format options.FormatFlag
		out    scanOutput
		tf     options.TrivyFlags
		it     options.IndexFlags
	)
	return &Command{
		Use:     "scan (DIST | --index REF (--public-key FILE | --root-key FILE)) [PACKAGE[@VERSION]...] [--fail-on CRITICAL|HIGH|MEDIUM|LOW] [--trivy PATH] [--trivy-offline] [--trivy-cache-dir DIR] [-j N] [--format table|json] [-o FILE]",
		Summary: "Scan the images that packages run for known vulnerabilities with Trivy.",
		Help: `Runs Trivy once on every distinct image pinned by digest that the builds of a
dist directory, or the versions of the published index --index (a site
directory, index.yaml or http(s) URL, verified first with --public-key or
--root-key), run (all packages, or the PACKAGEs named), several at once, and
prints one row per package version and image:

  PACKAGE IMAGE CRITICAL HIGH MEDIUM LOW UNKNOWN

and the vulnerability database the scan used. Images that are not pinned by
digest, and packages with charts but no images, cannot be scanned: they are
named on stderr. --format json writes the full report, every finding
included; -o FILE writes the report there instead of stdout.

--fail-on SEVERITY exits 1 when an image has a vulnerability at or above it,
with one line per image and severity: "<pkg> runs <image> with <N> <SEVERITY>
vulnerabilities". Without --trivy-offline Trivy first downloads or updates
its database; with it, the database must already be in --trivy-cache-dir
(CI keeps it there) and nothing but the images' registries is contacted.

The old spellings -o table|json (now --format), --output-file (now -o),
--offline and --cache-dir (now --trivy-offline and --trivy-cache-dir) still
work for one release, with a notice; -o ./json writes a file named json.

Examples:
  # scan everything built into dist/
  kbuild scan dist

  # fail the pipeline on critical vulnerabilities, offline, with a cached DB
  kbuild scan dist --fail-on CRITICAL --trivy-offline --trivy-cache-dir .cache/trivy

  # a machine-readable report of a published repository
  kbuild scan --index https://charts.example.com/index.yaml --public-key keys/index.pub --format json -o scan.json`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&failOn, "fail-on", "", "exit 1 when an image has a vulnerability of this severity or higher: CRITICAL, HIGH, MEDIUM or LOW")
			tf.AddFlags(fs)
			tf.AddOfflineFlag(fs)
			it.AddFlags(fs, "to scan instead of a DIST")
			options.AddTimeoutFlag(fs, &a.Timeout, "the index's site")
			jobs.AddFlags(fs, "images scanned")
			format.AddFlags(fs, false, "table", "json")
			out = scanOutput{}
			fs.VarP(&out, "output", "o", "write the report to `FILE` instead of stdout")
			fs.StringVar(&out.path, "output-file", "", "")
			markAlias(fs, "output-file", "output")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if err := selectBuilds(env, "kbuild scan", &it, args, &a.Selection); err != nil {
				return err
			}
			if out.oldFormat != "" {
				fmt.Fprintf(env.Stderr, "warning: kbuild scan: -o %s as a format is deprecated and goes away in the next release; use --format %s (-o names the report file; -o ./%s writes a file named %s)\n", out.oldFormat, out.oldFormat, out.oldFormat, out.oldFormat)
				format.Format = out.oldFormat
			}
			if err := format.Check(); err != nil {
				return err
			}
			var err error
			if a.Jobs, err = jobs.Count(); err != nil {
				return err
			}
			a.JSON = format.Format == "json"
			a.Scanner = func() (sbom.VulnScanner, error) { return tf.Trivy() }
			if failOn != "" {
				if a.FailOn, err = sbom.ParseSeverity(failOn); err != nil || a.FailOn == sbom.SeverityUnknown {
					return usagef("--fail-on %s: expected CRITICAL, HIGH, MEDIUM or LOW", failOn)
				}
			}
			res, err := a.Run(ctx)
			if err := readWarnings(env, append(res.Warnings, res.Unscanned...), err); err != nil {
				return err
			}
			if err := writeOutput(env, cmp.Or(out.path, "-"), res.Report); err != nil {
				return err
			}
			for _, v := range res.Violations {
				fmt.Fprintln(env.Stderr, v)
			}
			if len(res.Violations) > 0 {
				return &exitError{Code: 1}
			}
			return nil
		},
	}
}

// scanOutput is scan's -o: the report file. The old spelling -o table|json
// named the format; those two values are kept as that for one release.
type scanOutput struct {
	path, oldFormat string
}

func (o *scanOutput) Set(v string) error {
	if v == "table" || v == "json" {
		o.oldFormat = v
		return nil
	}
	o.path = v
	return nil
}

func (o *scanOutput) String() string { return o.path }

func (o *scanOutput) Type() string { return "string" }
