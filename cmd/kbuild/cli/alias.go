package cli

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// AliasOf is the annotation of a hidden flag that is an old spelling of
// another flag: its value is the new flag's name.
const AliasOf = "kbuild-alias-of"

// AddAlias adds old (with shorthand, "" for none) as a hidden, deprecated
// spelling of the flag named current, which must be defined already: both
// set the same value. The old spellings are kept for one release; see
// ResolveAliases for the notice they print.
func AddAlias(fs *pflag.FlagSet, old, shorthand, current string) {
	f := fs.Lookup(current)
	if f == nil {
		panic(fmt.Sprintf("flag alias --%s: no flag --%s", old, current))
	}
	fs.AddFlag(&pflag.Flag{
		Name:        old,
		Shorthand:   shorthand,
		Usage:       "deprecated: use --" + current,
		Value:       f.Value,
		DefValue:    f.DefValue,
		NoOptDefVal: f.NoOptDefVal,
		Hidden:      true,
		Annotations: map[string][]string{AliasOf: {current}},
	})
}

// MarkAlias marks the defined flag old as a hidden, deprecated spelling of
// current, for an old spelling that keeps a value of its own.
func MarkAlias(fs *pflag.FlagSet, old, current string) {
	f := fs.Lookup(old)
	if f == nil || fs.Lookup(current) == nil {
		panic(fmt.Sprintf("flag alias --%s of --%s: a flag is not defined", old, current))
	}
	f.Hidden = true
	f.Usage = "deprecated: use --" + current
	_ = fs.SetAnnotation(old, AliasOf, []string{current}) // old is defined: it cannot fail
}

// ResolveAliases runs after parsing: for every old spelling given it
// prints one line on w naming the new flag, and marks the new flag as
// changed, so that code asking fs.Changed(new) sees it.
func ResolveAliases(w io.Writer, cmd string, fs *pflag.FlagSet) {
	fs.Visit(func(f *pflag.Flag) {
		a := f.Annotations[AliasOf]
		if len(a) != 1 {
			return
		}
		if nf := fs.Lookup(a[0]); nf != nil {
			nf.Changed = true
		}
		spelling := "--" + f.Name
		if f.Shorthand != "" {
			spelling = "-" + f.Shorthand + "/--" + f.Name
		}
		fmt.Fprintf(w, "warning: %s: %s is deprecated and goes away in the next release; use --%s\n", cmd, spelling, a[0])
	})
}
