// Command kbuild builds kubepkg recipes into byte-reproducible Helm charts,
// pushes them to an OCI registry and publishes a signed static index.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"

	"kbuild.dev/kbuild/builder/render"
)

// Env is what a command may touch of the process: its output streams and
// environment. Tests replace it.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// Warnf prints a warning line on stderr, in CI too (unlike progress).
func (e *Env) Warnf(format string, args ...any) { fmt.Fprintf(e.Stderr, format+"\n", args...) }

// usageError makes kbuild print the command's usage and exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// exitError carries an exit code for failures already reported on stderr
// (for example `N of M recipes failed`).
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func commands() []*Command {
	return []*Command{
		newPublishCmd(),
		newBuildCmd(),
		newValidateCmd(),
		newInitCmd(),
		newFetchCmd(),
		newCacheCmd(),
		newImagesCmd(),
		newDiffCmd(),
		newOutdatedCmd(),
		newBumpCmd(),
		newPlanCmd(),
		newRepoCmd(),
		newTrustCmd(),
		newSBOMCmd(),
		newScanCmd(),
		newAttestCmd(),
		newTestCmd(),
		newPromoteCmd(),
		newVerifyProvenanceCmd(),
		newRebuildCheckCmd(),
		newBundleCmd(),
		newServeCmd(),
		newVersionCmd(),
	}
}

func main() {
	render.WorkerMain() // a rendering worker Render started renders and exits here
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cgoWarning(os.Stderr, builtWithCgo, addressSpaceLimit())
	log.SetOutput(stdlogFilter{os.Stderr})
	code := run(ctx, &Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run executes kbuild with args and returns the process exit code.
func run(ctx context.Context, env *Env, args []string) int {
	root := &Command{
		Name:        "kbuild",
		Usage:       "kbuild COMMAND [FLAGS]",
		Summary:     "Build kubepkg recipes into reproducible Helm charts and publish a signed static index.",
		Subcommands: commands(),
	}
	return dispatch(ctx, env, root, []string{"kbuild"}, args)
}
