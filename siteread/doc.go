// Package siteread is the verified reader of a published site, local or
// remote, beside sitelayout, which names the site's files. Every reader of
// a site goes through it, as a subscriber does:
//
//   - site.go: the files of a site — index.yaml, index.yaml.sig,
//     root.yaml and root/<N>.yaml, the signatures by hash — read from a
//     local directory or an http(s) URL with an idle timeout, a time
//     budget and a size limit per file (New, Site.Fetch, Site.Index), and
//     verified (Site.Verify: the root chain, then trust.Verify, then the
//     signature by hash).
//   - read.go: Open and ReadIndex, the one verified way to read a
//     published index (repo verify, sbom, scan, bundle, promote), and the
//     build info beside it.
//   - base.go: LoadBase, the published index a publish extends, verified
//     into an index.Builder.
//   - builds.go: LoadBuilds, the builds of a verified index or of a build
//     directory, for SBOMs.
//   - rootfile.go, statefile.go: the root of trust and the subscriber's
//     state as files (ReadRootFile, WriteRootVersion, SignRootFile,
//     ReadState, WriteState).
//
// publish keeps the job (build, push, sign, write); siteread only reads,
// and writes the root and state files a publisher or subscriber keeps.
package siteread
