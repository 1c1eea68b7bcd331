package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"
)

// Env is what a command reads and writes besides its arguments: its
// output streams and the environment.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// Warnf prints one line on stderr.
func (e *Env) Warnf(format string, args ...any) { fmt.Fprintf(e.Stderr, format+"\n", args...) }

// UsageError is a mistake in the command line: Dispatch prints it with a
// pointer to --help.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a UsageError.
func Usagef(format string, args ...any) error { return &UsageError{fmt.Sprintf(format, args...)} }

// ExitError ends a command with exit status Code, having printed what
// it had to say.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// Command is one subcommand: its usage line, a one-line summary, a help
// text with examples, its flags and what it runs. Use is the usage line
// after the parent commands, as cobra's Command.Use: the command's name
// (Name), then its arguments and flags with UPPERCASE placeholders. Args,
// when set, checks the arguments before Run (ExactArgs, MinArgs). A
// command with Subcommands dispatches on its first argument.
type Command struct {
	Use         string
	Summary     string
	Help        string
	Flags       func(fs *pflag.FlagSet)
	Args        func(args []string) error
	Run         func(ctx context.Context, env *Env, args []string) error
	Subcommands []*Command
}

// Name is the command's name, the first word of Use.
func (c *Command) Name() string {
	name, _, _ := strings.Cut(c.Use, " ")
	return name
}

// Program is how Dispatch ends a command: Hint adds advice to a
// command's error, Code maps the error to the exit status (a UsageError
// and an ExitError are mapped by the caller's Code too), and Footer ends
// every help text (the exit statuses).
type Program struct {
	Hint   func(error) error
	Code   func(error) int
	Footer string
}

// Dispatch runs c, called as path, with args and returns the exit status.
func (p *Program) Dispatch(ctx context.Context, env *Env, c *Command, path []string, args []string) int {
	if len(c.Subcommands) > 0 {
		if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			if len(args) > 1 && args[0] == "help" {
				return p.Dispatch(ctx, env, c, path, append(args[1:], "--help"))
			}
			p.printHelp(env.Stdout, c, path, nil)
			if len(args) == 0 {
				return 2
			}
			return 0
		}
		for _, sub := range c.Subcommands {
			if sub.Name() == args[0] {
				return p.Dispatch(ctx, env, sub, append(path, sub.Name()), args[1:])
			}
		}
		fmt.Fprintf(env.Stderr, "%s: unknown command %q; run '%s --help' for the list\n", strings.Join(path, " "), args[0], strings.Join(path, " "))
		return 2
	}
	fs, help := c.FlagSet(path)
	if err := fs.Parse(args); err != nil {
		printUsageError(env.Stderr, path, err.Error())
		return p.Code(&UsageError{err.Error()})
	}
	if *help {
		p.printHelp(env.Stdout, c, path, fs)
		return 0
	}
	ResolveAliases(env.Stderr, strings.Join(path, " "), fs)
	var err error
	if c.Args != nil {
		err = c.Args(fs.Args())
	}
	if err == nil {
		err = c.Run(ctx, env, fs.Args())
	}
	err = p.Hint(err)
	var ue *UsageError
	var ee *ExitError
	switch {
	case err == nil:
	case errors.As(err, &ue):
		printUsageError(env.Stderr, path, ue.Msg)
	case errors.As(err, &ee):
	default:
		fmt.Fprintf(env.Stderr, "error: %v\n", err)
	}
	return p.Code(err)
}

// printUsageError prints a usage error and one line pointing to --help
// (not the whole help: in a CI log the error is then the last thing).
func printUsageError(w io.Writer, path []string, msg string) {
	cmd := strings.Join(path, " ")
	fmt.Fprintf(w, "%s: %s\nRun '%s --help' for usage and examples.\n", cmd, msg, cmd)
}

// FlagSet returns the flags of c, run as path, with -h/--help last.
func (c *Command) FlagSet(path []string) (*pflag.FlagSet, *bool) {
	fs := pflag.NewFlagSet(strings.Join(path, " "), pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	if c.Flags != nil {
		c.Flags(fs)
	}
	return fs, fs.BoolP("help", "h", false, "show this help")
}

// printHelp prints the help of c: its summary, usage and help text, then
// its subcommands (fs is nil) or its flags, and the footer.
func (p *Program) printHelp(w io.Writer, c *Command, path []string, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  %s\n", c.Summary, strings.Join(append(slices.Clone(path[:len(path)-1]), c.Use), " "))
	if c.Help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.Help, "\n"))
	}
	if len(c.Subcommands) > 0 {
		fmt.Fprintf(w, "\nCommands:\n")
		table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, sub := range c.Subcommands {
			fmt.Fprintf(table, "  %s\t%s\n", sub.Name(), sub.Summary)
		}
		table.Flush()
		fmt.Fprintf(w, "\nRun '%s COMMAND --help' for a command's flags and examples.\n", strings.Join(path, " "))
	}
	if fs != nil && fs.HasFlags() {
		fmt.Fprintf(w, "\nFlags:\n%s", fs.FlagUsages())
	}
	fmt.Fprintf(w, "\n%s\n", p.Footer)
}

// ExactArgs is an Args check: exactly n arguments, else the usage error
// msg.
func ExactArgs(n int, msg string) func([]string) error {
	return func(args []string) error {
		if len(args) != n {
			return Usagef("%s", msg)
		}
		return nil
	}
}

// MinArgs is an Args check: at least n arguments, else the usage error
// msg.
func MinArgs(n int, msg string) func([]string) error {
	return func(args []string) error {
		if len(args) < n {
			return Usagef("%s", msg)
		}
		return nil
	}
}
