// Package cli is kbuild's command framework, as cobra is Helm's: a
// Command with its usage, help text, flags (a pflag.FlagSet each) and
// Run; Dispatch, which finds the command of the arguments, parses its
// flags, prints --help, checks the arguments and runs it; usage errors and
// exit statuses; and the old spellings of flags (AddAlias), which still
// work with a notice. It knows nothing of kbuild's commands: those are in
// package main, one file each.
package cli
