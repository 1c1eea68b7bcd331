package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"sigs.k8s.io/kwok/pkg/config"
	kwokcmd "sigs.k8s.io/kwok/pkg/kwok/cmd"
	"sigs.k8s.io/kwok/pkg/log"
	"sigs.k8s.io/kwok/pkg/utils/signals"
)

// runKwok starts kwok as its own main does: global logging and config flags
// first, then the command.
func runKwok(args []string) int {
	// The Kubernetes packages linked beside kwok register a non-bool
	// --version on the global flag set, which cobra would read as its
	// own: kwok starts from an empty one, as in its own binary.
	pflag.CommandLine = pflag.NewFlagSet("kwok", pflag.ExitOnError)
	global := pflag.NewFlagSet("global", pflag.ContinueOnError)
	global.ParseErrorsAllowlist.UnknownFlags = true
	global.Usage = func() {}

	ctx := signals.SetupSignalContext()
	ctx, logger := log.InitFlags(ctx, global)
	ctx, err := config.InitFlags(ctx, global)
	if err != nil {
		fmt.Fprintln(os.Stderr, global.FlagUsages())
		logger.Error("kwok: config flags", "err", err)
		return 1
	}
	cmd := kwokcmd.NewCommand(ctx)
	cmd.PersistentFlags().AddFlagSet(global)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		logger.Error("kwok", "err", err)
		return 1
	}
	return 0
}
