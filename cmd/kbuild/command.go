package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// Command is one kbuild subcommand: a usage line with UPPERCASE
// placeholders, a one-line summary, a help text with examples, its flags and
// what it runs. Args, when set, checks the arguments before Run (exactArgs,
// minArgs). A command with Subcommands dispatches on its first argument.
type Command struct {
	Name        string
	Usage       string
	Summary     string
	Help        string
	Flags       func(fs *pflag.FlagSet)
	Args        func(args []string) error
	Run         func(ctx context.Context, env *Env, args []string) error
	Subcommands []*Command
}

func dispatch(ctx context.Context, env *Env, c *Command, path []string, args []string) int {
	if len(c.Subcommands) > 0 {
		if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			if len(args) > 1 && args[0] == "help" {
				return dispatch(ctx, env, c, path, append(args[1:], "--help"))
			}
			printGroupHelp(env.Stdout, c, path)
			if len(args) == 0 {
				return 2
			}
			return 0
		}
		for _, sub := range c.Subcommands {
			if sub.Name == args[0] {
				return dispatch(ctx, env, sub, append(path, sub.Name), args[1:])
			}
		}
		fmt.Fprintf(env.Stderr, "%s: unknown command %q; run '%s --help' for the list\n", strings.Join(path, " "), args[0], strings.Join(path, " "))
		return 2
	}
	fs, help := c.flagSet(path)
	if err := fs.Parse(args); err != nil {
		printUsageError(env.Stderr, path, err.Error())
		return exitUsage
	}
	if *help {
		printHelp(env.Stdout, c, fs)
		return 0
	}
	resolveAliases(env.Stderr, strings.Join(path, " "), fs)
	var err error
	if c.Args != nil {
		err = c.Args(fs.Args())
	}
	if err == nil {
		err = c.Run(ctx, env, fs.Args())
	}
	err = withHint(err)
	var ue *usageError
	var ee *exitError
	switch {
	case err == nil:
	case errors.As(err, &ue):
		printUsageError(env.Stderr, path, ue.msg)
	case errors.As(err, &ee):
	default:
		fmt.Fprintf(env.Stderr, "error: %v\n", err)
	}
	return exitCode(err)
}

// printUsageError prints a usage error and one line pointing to --help
// (not the whole help: in a CI log the error is then the last thing).
func printUsageError(w io.Writer, path []string, msg string) {
	cmd := strings.Join(path, " ")
	fmt.Fprintf(w, "%s: %s\nRun '%s --help' for usage and examples.\n", cmd, msg, cmd)
}

// flagSet returns the flags of c, run as path, with -h/--help last.
func (c *Command) flagSet(path []string) (*pflag.FlagSet, *bool) {
	fs := pflag.NewFlagSet(strings.Join(path, " "), pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	if c.Flags != nil {
		c.Flags(fs)
	}
	return fs, fs.BoolP("help", "h", false, "show this help")
}

func printHelp(w io.Writer, c *Command, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  %s\n", c.Summary, c.Usage)
	if c.Help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.Help, "\n"))
	}
	if fs != nil && fs.HasFlags() {
		fmt.Fprintf(w, "\nFlags:\n%s", fs.FlagUsages())
	}
	fmt.Fprintf(w, "\n%s\n", exitStatusHelp)
}

func printGroupHelp(w io.Writer, c *Command, path []string) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  %s\n", c.Summary, c.Usage)
	if c.Help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.Help, "\n"))
	}
	fmt.Fprintf(w, "\nCommands:\n")
	width := 0
	for _, sub := range c.Subcommands {
		width = max(width, len(sub.Name))
	}
	for _, sub := range c.Subcommands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, sub.Name, sub.Summary)
	}
	fmt.Fprintf(w, "\nRun '%s COMMAND --help' for a command's flags and examples.\n\n%s\n", strings.Join(path, " "), exitStatusHelp)
}

// exactArgs is an Args check: exactly n arguments, else the usage error
// msg.
func exactArgs(n int, msg string) func([]string) error {
	return func(args []string) error {
		if len(args) != n {
			return usagef("%s", msg)
		}
		return nil
	}
}

// minArgs is an Args check: at least n arguments, else the usage error
// msg.
func minArgs(n int, msg string) func([]string) error {
	return func(args []string) error {
		if len(args) < n {
			return usagef("%s", msg)
		}
		return nil
	}
}
