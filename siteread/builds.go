package siteread

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/fault"
	"kbuild.dev/kbuild/sbom"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// Builds are what kbuild sbom and kbuild scan read: the build records of
// a dist directory, or the versions of a verified index.yaml.
type Builds struct {
	// Name is the source as given: a URL or a cleaned path.
	Name string
	// What says what the source is, for errors: "dist directory DIR" or
	// "index INDEX".
	What string
	// Builds are sorted by package name, each package's newest first.
	Builds []sbom.Build
	// Generated is the index's generated time; zero for a dist directory.
	Generated time.Time
	// Warnings are those of verifying the index.
	Warnings []string
}

// ErrUnverified is wrapped by LoadBuilds' error for an index given
// without the keys that verify it.
var ErrUnverified = fault.New(fault.Verification, "a published index is used only once its signature is verified")

// ErrNotBuilds is wrapped by LoadBuilds's error about a local source that
// does not exist: it takes a dist directory or an index.yaml.
var ErrNotBuilds = errors.New("expected a dist directory or an index.yaml")

// NoRecordsError is LoadBuilds's error about a dist directory without
// build records: nothing was built into it.
type NoRecordsError struct {
	// Dir is the dist directory.
	Dir string
}

func (e *NoRecordsError) Error() string {
	return fmt.Sprintf("dist directory %s has no build records (<name>-<version>-<build>.yaml)", e.Dir)
}

// BuildsOptions shape LoadBuilds.
type BuildsOptions struct {
	// BuildInfo looks up each version's BuildInfo sidecar beside an index
	// (default: not looked up).
	BuildInfo bool
	// Timeout bounds how long the index's site may send nothing (default:
	// Site's).
	Timeout time.Duration
	// Index says src is a published index (kbuild's --index): a directory
	// is then a site, not a dist directory (default: a directory is a
	// dist directory).
	Index bool
}

// LoadBuilds reads src: an http(s) URL of an index.yaml, a path of one,
// or a dist directory (with o.Index, a site directory instead). An index is read with ReadIndex, verified with
// trust, which it needs (else the error wraps ErrUnverified). With
// o.BuildInfo, the BuildInfo sidecars of an index are looked up at
// build/<name>-<version>-<build>.build.yaml beside it and checked to be
// about their version.
func LoadBuilds(ctx context.Context, src string, trust *trust.Trust, o BuildsOptions) (*Builds, error) {
	remote := strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://")
	name := src
	if !remote {
		name = filepath.ToSlash(filepath.Clean(src))
	}
	if !remote && !o.Index {
		fi, err := os.Stat(src)
		if err != nil {
			return nil, fmt.Errorf("%w; %w", err, ErrNotBuilds)
		}
		if fi.IsDir() {
			return fromDist(src, name)
		}
	}
	if trust == nil {
		return nil, fmt.Errorf("reading the index %s: %w", src, ErrUnverified)
	}
	var fo []Option
	if o.Timeout > 0 {
		fo = append(fo, WithTimeout(o.Timeout))
	}
	pub, err := ReadIndex(ctx, src, trust, fo...)
	if err != nil {
		return nil, err
	}
	in, err := fromIndex(name, pub.Verified.Index, func(n, v string, b int) ([]byte, bool, error) {
		if !o.BuildInfo {
			return nil, false, nil
		}
		return pub.BuildInfo(ctx, n, v, b)
	})
	if err != nil {
		return nil, err
	}
	in.Warnings = pub.Verified.Warnings
	return in, nil
}

// fromDist reads the build records of a dist directory.
func fromDist(src, name string) (*Builds, error) {
	recs, err := dist.Read(src)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, &NoRecordsError{Dir: src}
	}
	in := &Builds{Name: name, What: "dist directory " + src}
	for _, r := range recs {
		in.Builds = append(in.Builds, sbom.FromRecord(r.Record, r.Info))
	}
	return in, nil
}

// fromIndex returns the versions of x, sorted by package, each with the
// BuildInfo sidecar returns for it, if any.
func fromIndex(name string, x *index.RepositoryIndex, sidecar func(name, version string, build int) ([]byte, bool, error)) (*Builds, error) {
	in := &Builds{Name: name, What: "index " + name, Generated: x.Generated}
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
				info := new(spec.BuildInfo)
				if err := yaml.UnmarshalStrict(data, info); err != nil {
					return nil, fmt.Errorf("build info build/%s.build.yaml beside %s: %w", key, name, err)
				}
				if info.Kind != spec.BuildInfoKind || info.Package != n || info.Version != v.Version || info.Build != v.Build {
					return nil, fmt.Errorf("build info build/%s.build.yaml beside %s: expected kind %s of %s@%s build %d, got kind %q of %s@%s build %d; republish the sidecars with the index", key, name, spec.BuildInfoKind, n, v.Version, v.Build, info.Kind, info.Package, info.Version, info.Build)
				}
				b.Info = info
			}
			in.Builds = append(in.Builds, b)
		}
	}
	return in, nil
}

// Select returns the builds that PACKAGE[@VERSION] arguments name (a
// leading v of VERSION ignored), each once, or all of them without
// arguments. A name that matches nothing is an error listing what there
// is.
func (in *Builds) Select(args []string) ([]sbom.Build, error) {
	if len(args) == 0 {
		return in.Builds, nil
	}
	byName := map[string][]sbom.Build{}
	for _, b := range in.Builds {
		byName[b.Name] = append(byName[b.Name], b)
	}
	chosen := map[string]bool{}
	var out []sbom.Build
	for _, arg := range args {
		name, ver, hasVer := strings.Cut(arg, "@")
		ver = spec.CanonicalVersion(ver)
		cands := byName[name]
		if len(cands) == 0 {
			names := make([]string, 0, len(byName))
			for n := range byName {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("package %q is not in %s; it has %s", name, in.What, strings.Join(names, ", "))
		}
		n := 0
		for _, b := range cands {
			if hasVer && !spec.SameVersion(b.Spec.Version, ver) {
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
			return nil, fmt.Errorf("%s@%s is not in %s; %s has %s", name, ver, in.What, name, strings.Join(have, ", "))
		}
	}
	return out, nil
}
