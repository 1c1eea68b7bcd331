package main

import (
	"bytes"
	"context"
	"fmt"
	"runtime"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/sbom"
)

func newScanCmd() *Command {
	var (
		failOn  string
		offline bool
		jobs    int
		format  string
		outFile string
		tf      trivyFlags
		it      indexTrust
	)
	return &Command{
		Name:    "scan",
		Usage:   "kbuild scan DIST|INDEX [PACKAGE[@VERSION]...] [--public-key FILE] [--fail-on CRITICAL|HIGH|MEDIUM|LOW] [--trivy PATH] [--offline] [--cache-dir DIR] [-j N] [-o table|json] [--output-file FILE]",
		Summary: "Scan the images that packages run for known vulnerabilities with Trivy.",
		Help: `Runs Trivy once on every distinct image pinned by digest that the builds of a
dist directory, or the versions of an index.yaml (path or http(s) URL,
verified first with --public-key or --root-key), run
(all packages, or the PACKAGEs named), several at once, and prints one row
per package version and image:

  PACKAGE IMAGE CRITICAL HIGH MEDIUM LOW UNKNOWN

and the vulnerability database the scan used. Images that are not pinned by
digest, and packages with charts but no images, cannot be scanned: they are
named on stderr. -o json writes the full report, every finding included.

--fail-on SEVERITY exits 1 when an image has a vulnerability at or above it,
with one line per image and severity: "<pkg> runs <image> with <N> <SEVERITY>
vulnerabilities". Without --offline Trivy first downloads or updates its
database; with it, the database must already be in the cache directory (CI
keeps it there) and nothing but the images' registries is contacted.

Examples:
  # scan everything built into dist/
  kbuild scan dist

  # fail the pipeline on critical vulnerabilities, offline, with a cached DB
  kbuild scan dist --fail-on CRITICAL --offline --cache-dir .cache/trivy

  # a machine-readable report of a published repository
  kbuild scan https://charts.example.com/index.yaml --public-key keys/index.pub -o json --output-file scan.json`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&failOn, "fail-on", "", "exit 1 when an image has a vulnerability of this severity or higher: CRITICAL, HIGH, MEDIUM or LOW")
			fs.BoolVar(&offline, "offline", false, "use the vulnerability DB in the cache directory as it is; contact nothing but the images' registries")
			tf.addFlags(fs)
			it.addFlags(fs)
			it.addTimeout(fs)
			fs.IntVarP(&jobs, "jobs", "j", 0, "images scanned at once (default: the number of CPUs)")
			fs.StringVarP(&format, "output", "o", "table", "report format: table or json")
			fs.StringVar(&outFile, "output-file", "", "write the report to FILE instead of stdout")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) == 0 {
				return usagef("expected DIST or INDEX")
			}
			if format != "table" && format != "json" {
				return usagef("-o %s: expected table or json", format)
			}
			if jobs < 0 {
				return usagef("-j %d: expected at least 1", jobs)
			}
			if jobs == 0 {
				jobs = runtime.NumCPU()
			}
			threshold := sbom.Severity(-1)
			if failOn != "" {
				s, err := sbom.ParseSeverity(failOn)
				if err != nil || s == sbom.SeverityUnknown {
					return usagef("--fail-on %s: expected CRITICAL, HIGH, MEDIUM or LOW", failOn)
				}
				threshold = s
			}
			trust, err := it.trust()
			if err != nil {
				return err
			}
			in, err := loadBuilds(ctx, env, args[0], false, trust, it.timeout)
			if err != nil {
				return err
			}
			builds, err := in.Select(args[1:])
			if err != nil {
				return err
			}
			t, err := tf.trivy(offline)
			if err != nil {
				return err
			}
			report, err := sbom.Scan(ctx, builds, t, sbom.WithJobs(jobs))
			if err != nil {
				return err
			}
			for _, u := range report.Unscanned() {
				fmt.Fprintf(env.Stderr, "warning: %s\n", u)
			}
			var buf bytes.Buffer
			if format == "json" {
				err = report.WriteJSON(&buf)
			} else {
				err = report.WriteTable(&buf)
				db := report.Scanner.DBUpdatedAt
				if db == "" {
					db = "unknown"
				}
				fmt.Fprintf(&buf, "\nscanned with %s %s, vulnerability DB updated %s\n", report.Scanner.Name, report.Scanner.Version, db)
			}
			if err != nil {
				return err
			}
			if outFile != "" {
				if err := writeOutput(env, outFile, buf.Bytes()); err != nil {
					return err
				}
			} else if _, err := env.Stdout.Write(buf.Bytes()); err != nil {
				return err
			}
			if threshold >= 0 {
				if vs := report.Violations(threshold); len(vs) > 0 {
					for _, v := range vs {
						fmt.Fprintln(env.Stderr, v)
					}
					return &exitError{code: 1}
				}
			}
			return nil
		},
	}
}
