package main

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// addOutputFlag adds -o/--output, the one spelling of a path a command
// writes (a file or a directory; never a format, see formatFlag): what
// says what is written there.
func addOutputFlag(fs *pflag.FlagSet, p *string, def, what string) {
	fs.StringVarP(p, "output", "o", def, "write "+what)
}

// formatFlag is --format, the one spelling of an output format.
type formatFlag struct {
	format  string
	formats []string
}

// addFlags adds --format with the formats allowed, the first the default.
// With oldO, the old spellings -o/--output of the format are kept as
// hidden aliases.
func (f *formatFlag) addFlags(fs *pflag.FlagSet, oldO bool, formats ...string) {
	f.formats = formats
	fs.StringVar(&f.format, "format", formats[0], "output `FORMAT`: "+orList(formats))
	if oldO {
		addAlias(fs, "output", "o", "format")
	}
}

// check returns a usage error when --format is not one of the formats.
func (f *formatFlag) check() error {
	if !slices.Contains(f.formats, f.format) {
		return usagef("--format %q: use %s", f.format, orList(f.formats))
	}
	return nil
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
