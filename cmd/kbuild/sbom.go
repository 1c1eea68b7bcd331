package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/fetchsite"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/sbom"
)

func newSBOMCmd() *Command {
	var (
		out      string
		contents bool
		tf       trivyFlags
		it       indexFlags
		net      timeoutFlag
	)
	return &Command{
		Name:    "sbom",
		Usage:   "kbuild sbom (DIST | --index REF (--public-key FILE | --root-key FILE)) [PACKAGE[@VERSION]...] -o FILE [--with-image-contents] [--trivy PATH]",
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
			addOutputFlag(fs, &out, "", "the BOM to `FILE` (- for stdout); required")
			fs.BoolVar(&contents, "with-image-contents", false, "nest each pinned image's contents as Trivy lists them")
			tf.addFlags(fs)
			it.addFlags(fs, "to describe instead of a DIST")
			net.addFlags(fs, "the index's site")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			src, asIndex, pkgs, err := buildsSource(env, "kbuild sbom", it.ref, args)
			if err != nil {
				return err
			}
			if out == "" {
				return usagef("-o FILE is required")
			}
			trust, err := it.trust()
			if err != nil {
				return err
			}
			in, err := loadBuilds(ctx, env, src, asIndex, true, trust, net.timeout)
			if err != nil {
				return err
			}
			builds, err := in.selectBuilds(pkgs)
			if err != nil {
				return err
			}
			opts := []sbom.Option{sbom.WithTool("kbuild", version)}
			ts, err := in.timestamp(env)
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
			if len(pkgs) > 0 && len(builds) == 1 {
				bom, err = sbom.ForBuild(ctx, builds[0], opts...)
			} else {
				bom, err = sbom.ForRepository(ctx, in.name, builds, opts...)
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

// writeOutput writes data to file atomically, or to stdout for "-", and
// names the file on stdout.
func writeOutput(env *Env, file string, data []byte) error {
	if file == "-" {
		_, err := env.Stdout.Write(data)
		return err
	}
	if err := dist.WriteFile(file, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	fmt.Fprintln(env.Stdout, file)
	return nil
}

// buildsInput is what `kbuild sbom` and `kbuild scan` read: the build
// records of a dist directory, or the versions of an index.yaml.
type buildsInput struct {
	// name is the argument as given: a URL or a cleaned path.
	name string
	// what says what the input is, for errors: "dist directory DIR" or
	// "index INDEX".
	what      string
	builds    []sbom.Build
	generated time.Time
}

// buildsSource returns what sbom and scan read, from --index REF or the
// first argument, and the PACKAGE arguments. An index given as the first
// argument is the old spelling of --index: it still works, with a notice.
func buildsSource(env *Env, cmd, ref string, args []string) (src string, asIndex bool, pkgs []string, err error) {
	if ref != "" {
		return ref, true, args, nil
	}
	if len(args) == 0 {
		return "", false, nil, usagef("expected DIST, or --index REF")
	}
	if fi, err := os.Stat(args[0]); err != nil || !fi.IsDir() {
		fmt.Fprintf(env.Stderr, "warning: %s: an index as the first argument is deprecated and goes away in the next release; use --index %s\n", cmd, args[0])
	}
	return args[0], false, args[1:], nil
}

// loadBuilds reads src: an http(s) URL of an index.yaml, a path of one, or
// a dist directory; with asIndex, a directory is a site, not a dist
// directory. An index is read through publish.ReadIndex, verified with
// trust, which it needs. With infos, the BuildInfo sidecars of an index are
// looked up at build/<name>-<version>-<build>.build.yaml beside it.
func loadBuilds(ctx context.Context, env *Env, src string, asIndex, infos bool, trust *index.Trust, timeout time.Duration) (*buildsInput, error) {
	remote := strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://")
	name := src
	if !remote {
		name = filepath.ToSlash(filepath.Clean(src))
	}
	if !remote && !asIndex {
		fi, err := os.Stat(src)
		if err != nil {
			return nil, fmt.Errorf("%w; expected a dist directory (kbuild build -o DIST) or an index.yaml", err)
		}
		if fi.IsDir() {
			return fromDist(src, name)
		}
	}
	if trust == nil {
		return nil, usagef("reading the index %s needs --public-key FILE or --root-key FILE: a published index is used only once its signature is verified", src)
	}
	pub, err := publish.ReadIndex(ctx, src, trust, fetchsite.WithTimeout(timeout))
	if err != nil {
		return nil, err
	}
	for _, w := range pub.Verified.Warnings {
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	return fromIndex(name, pub.Verified.Index, func(n, v string, b int) ([]byte, bool, error) {
		if !infos {
			return nil, false, nil
		}
		return pub.BuildInfo(ctx, n, v, b)
	})
}

// fromDist reads the build records of a dist directory.
func fromDist(src, name string) (*buildsInput, error) {
	recs, err := dist.Read(src)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("dist directory %s has no build records (<name>-<version>-<build>.yaml); run kbuild build -o %s first", src, src)
	}
	in := &buildsInput{name: name, what: "dist directory " + src}
	for _, r := range recs {
		in.builds = append(in.builds, sbom.FromRecord(r.Record, r.Info))
	}
	return in, nil
}

func fromIndex(name string, x *index.RepositoryIndex, sidecar func(name, version string, build int) ([]byte, bool, error)) (*buildsInput, error) {
	in := &buildsInput{name: name, what: "index " + name, generated: x.Generated}
	names := make([]string, 0, len(x.Packages))
	for n := range x.Packages {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := x.Packages[n]
		for _, v := range p.Versions {
			b := sbom.Build{Name: n, Description: p.Description, Home: p.Home, Spec: v.Spec, Digest: v.Digest}
			key := dist.Key(n, v.Version, v.Build)
			data, found, err := sidecar(n, v.Version, v.Build)
			if err != nil {
				return nil, fmt.Errorf("build info build/%s.build.yaml beside %s: %w", key, name, err)
			}
			if found {
				info := new(index.BuildInfo)
				if err := yaml.UnmarshalStrict(data, info); err != nil {
					return nil, fmt.Errorf("build info build/%s.build.yaml beside %s: %w", key, name, err)
				}
				if info.Kind != index.BuildInfoKind || info.Package != n || info.Version != v.Version || info.Build != v.Build {
					return nil, fmt.Errorf("build info build/%s.build.yaml beside %s: expected kind %s of %s@%s build %d, got kind %q of %s@%s build %d; republish the sidecars with the index", key, name, index.BuildInfoKind, n, v.Version, v.Build, info.Kind, info.Package, info.Version, info.Build)
				}
				b.Info = info
			}
			in.builds = append(in.builds, b)
		}
	}
	return in, nil
}

// selectBuilds returns the builds that PACKAGE[@VERSION] arguments name,
// or all of them without arguments. A name that matches nothing is an
// error listing what there is.
func (in *buildsInput) selectBuilds(args []string) ([]sbom.Build, error) {
	if len(args) == 0 {
		return in.builds, nil
	}
	byName := map[string][]sbom.Build{}
	for _, b := range in.builds {
		byName[b.Name] = append(byName[b.Name], b)
	}
	chosen := map[string]bool{}
	var out []sbom.Build
	for _, arg := range args {
		name, ver, hasVer := strings.Cut(arg, "@")
		ver = strings.TrimPrefix(ver, "v")
		cands := byName[name]
		if len(cands) == 0 {
			names := make([]string, 0, len(byName))
			for n := range byName {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("package %q is not in %s; it has %s", name, in.what, strings.Join(names, ", "))
		}
		n := 0
		for _, b := range cands {
			if hasVer && b.Spec.Version != ver {
				continue
			}
			n++
			k := dist.Key(b.Name, b.Spec.Version, b.Spec.Build)
			if !chosen[k] {
				chosen[k] = true
				out = append(out, b)
			}
		}
		if n == 0 {
			var have []string
			for _, b := range cands {
				have = append(have, fmt.Sprintf("%s (build %d)", b.Spec.Version, b.Spec.Build))
			}
			return nil, fmt.Errorf("%s@%s is not in %s; %s has %s", name, ver, in.what, name, strings.Join(have, ", "))
		}
	}
	return out, nil
}

// timestamp is SOURCE_DATE_EPOCH when set, else the index's generated
// time, else zero (no timestamp).
func (in *buildsInput) timestamp(env *Env) (time.Time, error) {
	if strings.TrimSpace(env.Getenv("SOURCE_DATE_EPOCH")) != "" {
		return builder.SourceDateEpoch(env.Getenv)
	}
	return in.generated, nil
}
