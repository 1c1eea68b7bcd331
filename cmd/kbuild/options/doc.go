// Package options holds the flag groups kbuild's commands share, as
// cosign's cmd/cosign/cli/options does: each a struct whose AddFlags
// registers its flags on a command's pflag.FlagSet, with the methods
// that turn them into what the libraries take — a source fetcher, a
// builder and its target, signers, the trust that verifies an index, the
// Trivy to run. One spelling and one meaning per flag across commands
// (the vocabulary cmd/kbuild's tests hold).
package options
