package options

import (
	"runtime"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/cli"
	"kbuild.dev/kbuild/internal/netdeadline"
)

// timeoutWhy says why --timeout defaults to 20 s.
const timeoutWhy = "; the default stays under the 30s a CI step or harness often allows, so that kbuild's own message, naming what stalled, comes first"

// AddTimeoutFlag adds --timeout, on every command that talks to a network,
// set into p (an action's field); what says what it gives up on.
func AddTimeoutFlag(fs *pflag.FlagSet, p *time.Duration, what string) {
	fs.DurationVar(p, "timeout", netdeadline.DefaultIdle, "give up on "+what+" when it sends nothing for this long"+timeoutWhy)
}

// AddTimeoutFlagNote is AddTimeoutFlag with a note after the meaning.
func AddTimeoutFlagNote(fs *pflag.FlagSet, p *time.Duration, what, note string) {
	fs.DurationVar(p, "timeout", netdeadline.DefaultIdle, "give up on "+what+" when it sends nothing for this long; "+note+timeoutWhy)
}

// AddPlainHTTPFlag adds --plain-http (plain HTTP to registries on
// loopback), set into p (an action's field); note says when it applies
// ("" for always).
func AddPlainHTTPFlag(fs *pflag.FlagSet, p *bool, note string) {
	usage := "talk plain HTTP to OCI registries on loopback (never to other registries)"
	if note != "" {
		usage += "; " + note
	}
	fs.BoolVar(p, "plain-http", false, usage)
}

// JobsFlag is -j/--jobs: how much work runs at once, 0 for one per CPU.
type JobsFlag struct {
	Jobs int
}

// AddFlags adds -j; what names the work ("recipes and charts built").
func (f *JobsFlag) AddFlags(fs *pflag.FlagSet, what string) {
	fs.IntVarP(&f.Jobs, "jobs", "j", 0, what+" at once; 0 (the default) is one per CPU")
}

// Count returns -j, with 0 made the number of CPUs; a negative -j is a
// usage error.
func (f *JobsFlag) Count() (int, error) {
	switch {
	case f.Jobs < 0:
		return 0, cli.Usagef("-j %d: give 1 or more, or 0 for one per CPU", f.Jobs)
	case f.Jobs == 0:
		return runtime.NumCPU(), nil
	}
	return f.Jobs, nil
}
