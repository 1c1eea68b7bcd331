// Package recipe is the kubepkg.dev Recipe model: the types a maintainer
// writes in recipe.yaml, a strict decoder that reports unknown fields and
// wrong types with their line, and the static checks that need no I/O.
//
// Checks that need the sources or a rendered chart (CRDs shipped, images run,
// patches matching) live in package builder.
package recipe
