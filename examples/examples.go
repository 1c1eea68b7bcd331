// Package examples embeds the bundled example recipes, so that `kbuild
// publish` with no arguments builds them from any working directory with no
// network and no registry.
package examples

import "embed"

// FS holds every example recipe directory, each with its recipe.yaml and
// local files.
//
//go:embed all:smart-proxy all:virt-template all:virt-stack
var FS embed.FS
