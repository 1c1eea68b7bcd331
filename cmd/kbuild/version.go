package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set at link time by scripts/release.sh:
//
//	-ldflags "-X main.release=v0.3.0 -X main.commit=0123…"
//
// Without them (go build, go install) they come from the build info Go
// stamps into every binary: the module version for `go install
// kbuild.dev/kbuild/cmd/kbuild@VERSION`, the VCS commit for a build in a
// checkout.
var (
	release string
	commit  string
)

// kbuildVersion says which kbuild this binary is.
type kbuildVersion struct {
	// Release is the release tag (v0.3.0), or devel-<commit> for a build
	// from a checkout, or devel when nothing is known.
	Release string
	// Commit is the git commit built, with -dirty when the work tree had
	// changes; empty when unknown.
	Commit string
	// Go is the Go toolchain that built the binary.
	Go string
	// Module and Sum are the main module's path and, for a binary built
	// from a module version (go install …@VERSION), its go.sum hash.
	Module, Sum string
}

// version is this binary's release, as recorded in build records,
// provenance and SBOMs.
var version = thisKbuild().Release

// thisKbuild reads the version of the running binary.
func thisKbuild() kbuildVersion {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{}
	}
	return readVersion(bi, release, commit, runtime.Version())
}

// readVersion is the version of a binary with build info bi and the
// link-time values rel and rev (either may be empty).
func readVersion(bi *debug.BuildInfo, rel, rev, goVersion string) kbuildVersion {
	v := kbuildVersion{Release: rel, Commit: rev, Go: goVersion, Module: bi.Main.Path, Sum: bi.Main.Sum}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	if v.Commit == "" {
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && v.Commit != "" {
			v.Commit += "-dirty"
		}
	}
	if v.Release == "" {
		if mv := bi.Main.Version; mv != "" && mv != "(devel)" {
			v.Release = mv
		}
	}
	if v.Release == "" {
		v.Release = "devel"
		if v.Commit != "" {
			short, dirty := strings.CutSuffix(v.Commit, "-dirty")
			v.Release += "-" + short[:min(12, len(short))]
			if dirty {
				v.Release += "-dirty"
			}
		}
	}
	return v
}

// ID is how build info and provenance name this kbuild: "kbuild RELEASE".
func (v kbuildVersion) ID() string { return "kbuild " + v.Release }

// print writes what `kbuild version` shows, one "key: value" a line.
func (v kbuildVersion) print(w interface{ Write([]byte) (int, error) }) {
	fmt.Fprintf(w, "kbuild %s\n", v.Release)
	if v.Commit != "" {
		fmt.Fprintf(w, "commit: %s\n", v.Commit)
	}
	fmt.Fprintf(w, "go: %s\n", v.Go)
	if v.Sum != "" {
		fmt.Fprintf(w, "module: %s %s\n", v.Module, v.Sum)
	}
}

func newVersionCmd() *Command {
	return &Command{
		Name:    "version",
		Usage:   "kbuild version",
		Summary: "Print kbuild's release, commit and Go version.",
		Help: `Prints the release (the tag, or devel-COMMIT for a build from a checkout),
the git commit, the Go version, and for a binary installed with
'go install kbuild.dev/kbuild/cmd/kbuild@VERSION' the module's go.sum hash.
Release binaries and the image have the release stamped at link time; a
'go install' binary reads it from Go's build info.

The release and module hash are recorded in every build's BuildInfo
(build/NAME-VERSION-BUILD.build.yaml: builder, builderSum), so
'kbuild rebuild-check' can say which kbuild built a version: rebuild with
that kbuild to get the same bytes.

Examples:
  # print the version
  kbuild version`,
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) > 0 {
				return usagef("version takes no arguments")
			}
			thisKbuild().print(env.Stdout)
			return nil
		},
	}
}
