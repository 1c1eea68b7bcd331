// Package sources fetches the sources of a kubepkg recipe, verifies every
// byte against its pin and keeps what it fetched in a content-addressed
// cache shared by kbuild processes.
//
// A Fetcher resolves each source kind into a local path:
//
//   - url: a file downloaded over HTTP(S) (or read from a file:// URL),
//     checked against its sha256; archives (.tar, .tar.gz/.tgz, .tar.xz,
//     .zip) are unpacked, with strip and path picking a subtree.
//   - chart: a Helm chart archive from an HTTP(S) repository (found
//     through its index.yaml, which is cached and revalidated) or an OCI
//     registry (the chart content layer), checked against its digest and
//     unpacked so that Chart.yaml is at the root of the result.
//   - dir: a directory inside the recipe directory, used in place.
//   - git: the tree at a commit (and path) fetched shallowly with the
//     system git and cached as a tar.
//   - image: a container image manifest pinned by digest; Mirror copies
//     it into another registry.
//   - plugin: a kubepkg-source-NAME program that writes the source.
//
// The cache keeps every blob under blobs/sha256/<hex>, written to a
// temporary name and renamed, and re-hashed whenever it is read; a
// corrupted entry is removed and fetched again. Once a source is cached
// no network is used for it, and in offline mode none at all.
//
// All input is treated as hostile: downloads, extracted files and chart
// indexes are size-limited; archive entries may not leave their directory
// (absolute names, .., links pointing out), devices, duplicate and overlong
// names and compression bombs are refused; YAML aliases and nesting are
// bounded; chart indexes are read in linear time, streaming, keeping only
// the wanted chart. Every network read has a deadline (internal/netdeadline:
// an idle timeout and a budget proportional to size), registry reads
// through go-containerregistry included; extraction stops when its context
// is done and removes what it wrote. Names from outside are quoted and cut
// short in errors. Errors wrap ErrUnsafe, ErrTooLarge, ErrOffline or
// netdeadline.ErrStalled, or are a *DigestMismatchError.
//
// Symlinks: chart archives may contain none (helm package never writes
// them). Elsewhere a symlink is kept when it resolves, through any other
// links, to an existing path inside its tree (the extracted archive, the
// git tree, the plugin output, or for dir sources the recipe directory);
// any other is an error. HashDir hashes a link as its target text. Helm's
// chart loader reads in-tree links as the files they point to, so a chart
// built from such a tree contains no symlinks.
package sources
