package main

import (
	"context"

	"kbuild.dev/kbuild/internal/kbuildversion"
)

// Set at link time by scripts/release.sh:
//
//	-ldflags "-X main.release=v0.3.0 -X main.commit=0123…"
//
// Without them (go build, go install) they come from the build info Go
// stamps into every binary: the module version for `go install
// kbuild.dev/kbuild/cmd/kbuild@VERSION`, the VCS commit for a build in a
// checkout.
var release, commit string

// version is this binary's release, as recorded in build records,
// provenance and SBOMs.
var version = thisKbuild().Release

// thisKbuild reads the version of the running binary.
func thisKbuild() kbuildversion.Version { return kbuildversion.Running(release, commit) }

func newVersionCmd() *Command {
	return &Command{
		Use:     "version",
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
		Args: exactArgs(0, "version takes no arguments"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			thisKbuild().Print(env.Stdout)
			return nil
		},
	}
}
