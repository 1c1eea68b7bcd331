// Command kbuild builds kubepkg recipes into byte-reproducible Helm charts,
// pushes them to an OCI registry and publishes a signed static index.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"

	"kbuild.dev/kbuild/builder/render"
	"kbuild.dev/kbuild/cmd/kbuild/cli"
	"kbuild.dev/kbuild/internal/addrspace"
)

// The command framework (package cli) under the names every command file
// uses: a Command, the Env it runs in, usage errors (exit 2) and exit
// errors (a status for failures already reported), and the Args checks
// and old flag spellings.
type (
	Command    = cli.Command
	Env        = cli.Env
	usageError = cli.UsageError
	exitError  = cli.ExitError
)

var (
	usagef    = cli.Usagef
	exactArgs = cli.ExactArgs
	minArgs   = cli.MinArgs
	addAlias  = cli.AddAlias
	markAlias = cli.MarkAlias
)

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
	cgoWarning(os.Stderr, builtWithCgo, uint64(addrspace.Now().Limit))
	log.SetOutput(stdlogFilter{os.Stderr})
	code := run(ctx, &Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run executes kbuild with args and returns the process exit code.
func run(ctx context.Context, env *Env, args []string) int {
	root := &Command{
		Use:         "kbuild COMMAND [FLAGS]",
		Summary:     "Build kubepkg recipes into reproducible Helm charts and publish a signed static index.",
		Subcommands: commands(),
	}
	return (&cli.Program{Hint: withHint, Code: exitCode, Footer: exitStatusHelp}).Dispatch(ctx, env, root, []string{"kbuild"}, args)
}
