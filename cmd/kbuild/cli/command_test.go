package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestDispatch: a group without a command prints its commands and exits
// 2, an unknown command and a bad flag are usage errors, --help prints the
// footer, an old flag spelling sets the new flag with a notice, the Args
// check runs before Run, and Run's error goes through Hint and Code.
func TestDispatch(t *testing.T) {
	var name string
	var ran bool
	leaf := &Command{Use: "say", Summary: "Say it.",
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&name, "name", "", "who")
			AddAlias(fs, "who", "", "name")
		},
		Args: MinArgs(1, "say needs WORD"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			ran = true
			if args[0] == "fail" {
				return errors.New("it failed")
			}
			return nil
		}}
	root := &Command{Use: "x COMMAND", Summary: "X.", Subcommands: []*Command{leaf}}
	p := &Program{Footer: "Exit status: …",
		Hint: func(err error) error {
			if err != nil && err.Error() == "it failed" {
				return errors.New("it failed; try again")
			}
			return err
		},
		Code: func(err error) int {
			var ue *UsageError
			switch {
			case err == nil:
				return 0
			case errors.As(err, &ue):
				return 2
			}
			return 1
		}}
	cases := []struct {
		args           []string
		code           int
		ran            bool
		stdout, stderr string
	}{
		{nil, 2, false, "Commands:\n  say  Say it.", ""},
		{[]string{"nope"}, 2, false, "", `x: unknown command "nope"`},
		{[]string{"say", "--bad"}, 2, false, "", "x say: unknown flag: --bad\nRun 'x say --help' for usage and examples."},
		{[]string{"say", "--help"}, 0, false, "Say it.\n\nUsage:\n  x say\n\nFlags:", ""},
		{[]string{"say"}, 2, false, "", "x say: say needs WORD"},
		{[]string{"say", "--who", "me", "hi"}, 0, true, "", "warning: x say: --who is deprecated and goes away in the next release; use --name"},
		{[]string{"say", "fail"}, 1, true, "", "error: it failed; try again"},
	}
	for _, tc := range cases {
		name, ran = "", false
		var stdout, stderr bytes.Buffer
		code := p.Dispatch(context.Background(), &Env{Stdout: &stdout, Stderr: &stderr}, root, []string{"x"}, tc.args)
		if code != tc.code || ran != tc.ran || !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("Dispatch(%q) = %d (ran %v)\nstdout:\n%s\nstderr:\n%s\nwant %d (ran %v), stdout with %q, stderr with %q", tc.args, code, ran, stdout.String(), stderr.String(), tc.code, tc.ran, tc.stdout, tc.stderr)
		}
	}
	if name != "" {
		t.Errorf("after the last case --name = %q", name)
	}
}
