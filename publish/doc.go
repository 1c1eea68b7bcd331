// Package publish makes and updates a repository site: it verifies the
// index published so far (the base), builds what is not published yet,
// pushes the charts and mirrors their image sources, confirms every new
// chart manifest is in the registry, signs build provenance, writes the
// SBOMs, the catalog and the content-addressed copies, and last replaces
// index.yaml.sig and index.yaml through renames. Only versions this run
// pushed, or that the verified base already had, are signed.
//
// The same base verification, signing and atomic index write serve
// 'kbuild repo index' (Index) and 'kbuild repo withdraw' (Withdraw). The
// layout of a site — which file is where — is named here once (Layout),
// for what writes a site and what reads one.
//
// What a reader sees while a publish runs: every file but index.yaml and
// index.yaml.sig is new or unchanged (nothing is removed), and the
// signature of each index is first written as by-hash/sha256/<hex>.sig,
// named by the sha256 of the index it signs, before index.yaml.sig and
// then index.yaml are renamed into place. A reader that fetches index.yaml
// and then its signature by the index's digest always gets a matching
// pair; a reader of index.yaml.sig may, for the instant between the two
// renames, get the new signature with the old index (it then fails
// verification and should retry).
package publish
