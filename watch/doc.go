// Package watch reads a recipe's watch rule (watch.yaml beside
// recipe.yaml) and looks upstream for newer versions: a Helm repository
// index, the tags of an OCI repository (charts and images), the tags of a
// git repository, the releases of a GitHub-style API (with their assets,
// paginated by Link headers) and an HTTP directory listing.
//
// A Rule says where upstream versions come from, which names are
// versions (a pattern, prefixes to strip), which versions are allowed (a
// semver constraint, a pre-release policy), and how the recipe's sources
// and images follow the version: URL and tag templates with {version} and
// {tag}, a release asset, a git tag, a chart version, and image tags from
// the version, another upstream or the chart's appVersion.
//
// Every answer from upstream is bounded: the bytes of each response, the
// pages followed, the names kept and, through internal/netdeadline, the
// time; a redirect to another host, or off loopback, or from HTTPS to
// HTTP, is refused with ErrRedirect. Names that are not versions are
// skipped and counted, never an error. Check runs the look-ups of many
// recipes concurrently and reports, per recipe and upstream, the current
// version and the newest one the rule allows.
package watch
