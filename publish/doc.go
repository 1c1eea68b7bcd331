// Package publish makes and updates a repository site: it verifies the
// index published so far (the base), builds what is not published yet,
// pushes the charts and mirrors their image sources, confirms every new
// chart manifest is in the registry, signs build provenance, writes the
// SBOMs, the catalog and the content-addressed copies, and last replaces
// index.yaml.sig and index.yaml through renames. Only versions this run
// pushed, or that the verified base already had, are signed.
//
// The same base verification, signing and atomic index write serve
// 'kbuild repo index' (RepoIndex, Index) and 'kbuild repo withdraw'
// (Withdraw). publish keeps the job; the site is named and read
// elsewhere: sitelayout names every file of a site (which file is where),
// and siteread is the verified reader (Open, ReadIndex, LoadBase,
// LoadBuilds, the root and state files) that publish reads its base with.
//
// What a reader sees while a publish runs: files are added or replaced,
// each whole (a temporary file and a rename), and none is removed before
// the new index is in place (then the SBOM and provenance files of
// versions beyond WithSiteKeep, which nothing written references); the
// catalog pages may show new versions a moment before index.yaml lists
// them. The signature of the new index is first written as
// by-hash/sha256/<hex>.sig, named by the sha256 of the index it signs,
// then index.yaml.sig, then index.yaml is renamed into place. A reader that
// fetches index.yaml and then the signature named by its digest
// (siteread's Open, ReadIndex and LoadBase do) always gets a matching pair; a reader of
// index.yaml.sig may, in the instant between the two renames, get the new
// signature with the old index: it fails verification and should retry.
package publish
