package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/cli"
)

// TestHelpGolden compares every command's --help, groups and kbuild itself
// included, with testdata/help/<command>.txt (regenerate with
// go test ./cmd/kbuild -run TestHelpGolden -update, and read the diff).
func TestHelpGolden(t *testing.T) {
	var walk func(path []string, c *Command)
	walk = func(path []string, c *Command) {
		name := "kbuild"
		if len(path) > 0 {
			name = strings.Join(path, "-")
		}
		t.Run(name, func(t *testing.T) {
			r := runInProcess(append(append([]string{}, path...), "--help")...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("kbuild %s --help: %s", strings.Join(path, " "), r)
			}
			checkCmdGolden(t, "help/"+name+".txt", []byte(r.stdout))
		})
		for _, sub := range c.Subcommands {
			walk(append(append([]string{}, path...), sub.Name()), sub)
		}
	}
	walk(nil, &Command{Subcommands: commands()})
}

// TestFlagAliases proves every old spelling of every command: given with a
// value, it sets exactly what the new spelling sets, marks the new flag
// changed, and prints one notice naming the new flag.
func TestFlagAliases(t *testing.T) {
	samples := map[string]string{"string": "x-value", "stringArray": "x-value", "int": "3", "duration": "7s", "bool": ""}
	n := 0
	for _, l := range leaves() {
		path := append([]string{"kbuild"}, l.path...)
		probe, _ := l.cmd.FlagSet(path)
		probe.VisitAll(func(old *pflag.Flag) {
			if !isAlias(old) {
				return
			}
			n++
			current := old.Annotations[cli.AliasOf][0]
			t.Run(strings.Join(l.path, "_")+"/"+old.Name, func(t *testing.T) {
				v, ok := samples[old.Value.Type()]
				if !ok {
					t.Fatalf("no sample value for type %s", old.Value.Type())
				}
				parse := func(args ...string) (*pflag.FlagSet, string) {
					fs, _ := l.cmd.FlagSet(path)
					if err := fs.Parse(args); err != nil {
						t.Fatalf("%s %v: %v", strings.Join(path, " "), args, err)
					}
					var w strings.Builder
					cli.ResolveAliases(&w, strings.Join(path, " "), fs)
					return fs, w.String()
				}
				spell := func(name string) []string {
					if v == "" {
						return []string{"--" + name}
					}
					return []string{"--" + name, v}
				}
				want, quiet := parse(spell(current)...)
				if quiet != "" {
					t.Errorf("--%s printed %q; only old spellings print a notice", current, quiet)
				}
				spellings := [][]string{spell(old.Name)}
				if old.Shorthand != "" {
					spellings = append(spellings, []string{"-" + old.Shorthand, v})
				}
				for _, args := range spellings {
					got, notice := parse(args...)
					if g, w := got.Lookup(current).Value.String(), want.Lookup(current).Value.String(); g != w || g == got.Lookup(current).DefValue {
						t.Errorf("%v set --%s to %q, want %q (what --%s sets)", args, current, g, w, current)
					}
					if !got.Changed(current) {
						t.Errorf("%v: --%s is not marked changed", args, current)
					}
					if strings.Count(notice, "\n") != 1 || !strings.Contains(notice, "deprecated") || !strings.Contains(notice, "use --"+current+"\n") {
						t.Errorf("%v: notice %q, want one line naming --%s", args, notice, current)
					}
				}
			})
		})
	}
	if n == 0 {
		t.Fatal("no old spellings found")
	}
}

// isAlias says whether f is an old spelling.
func isAlias(f *pflag.Flag) bool { return len(f.Annotations[cli.AliasOf]) == 1 }
