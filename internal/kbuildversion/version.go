// Package kbuildversion says which kbuild a binary is: its release,
// commit, Go version and module hash, from what a release stamps at link
// time or, without that, from the build info Go records in every binary
// (the module version for `go install …@VERSION`, the VCS commit for a
// build in a checkout).
package kbuildversion

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version says which kbuild a binary is.
type Version struct {
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

// Running is the version of the running binary, with the release and
// commit stamped at link time (either may be empty).
func Running(release, commit string) Version {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{}
	}
	return Read(bi, release, commit, runtime.Version())
}

// Read is the version of a binary with build info bi, the link-time
// values rel and rev (either may be empty) and, when bi names none, the
// Go version goVersion.
func Read(bi *debug.BuildInfo, rel, rev, goVersion string) Version {
	v := Version{Release: rel, Commit: rev, Go: goVersion, Module: bi.Main.Path, Sum: bi.Main.Sum}
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
func (v Version) ID() string { return "kbuild " + v.Release }

// Print writes what `kbuild version` shows: "kbuild RELEASE", then one
// "key: value" a line (commit and module only when known).
func (v Version) Print(w io.Writer) {
	fmt.Fprintf(w, "kbuild %s\n", v.Release)
	if v.Commit != "" {
		fmt.Fprintf(w, "commit: %s\n", v.Commit)
	}
	fmt.Fprintf(w, "go: %s\n", v.Go)
	if v.Sum != "" {
		fmt.Fprintf(w, "module: %s %s\n", v.Module, v.Sum)
	}
}
