package options

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/cli"
)

// AddOutputFlag adds -o/--output, the one spelling of a path a command
// writes (a file or a directory; never a format, see formatFlag): what
// says what is written there.
func AddOutputFlag(fs *pflag.FlagSet, p *string, def, what string) {
	fs.StringVarP(p, "output", "o", def, "write "+what)
}

// FormatFlag is --format, the one spelling of an output format.
type FormatFlag struct {
	Format  string
	Formats []string
}

// AddFlags adds --format with the formats allowed, the first the default.
// With oldO, the old spellings -o/--output of the format are kept as
// hidden aliases.
func (f *FormatFlag) AddFlags(fs *pflag.FlagSet, oldO bool, formats ...string) {
	f.Formats = formats
	fs.StringVar(&f.Format, "format", formats[0], "output `FORMAT`: "+orList(formats))
	if oldO {
		cli.AddAlias(fs, "output", "o", "format")
	}
}

// Check returns a usage error when --format is not one of the formats.
func (f *FormatFlag) Check() error {
	if !slices.Contains(f.Formats, f.Format) {
		return cli.Usagef("--format %q: use %s", f.Format, orList(f.Formats))
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
