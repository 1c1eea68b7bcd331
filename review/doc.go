// Package review compares two versions of a package the way a reviewer of a
// recipe change needs to see them: the rendered Kubernetes objects grouped
// by object (added, removed, or changed with a unified diff of the object's
// YAML), and the changes to the chart archives, images, CRDs, requirements,
// provided names, permissions and rollback safety of the package spec.
//
// Compare is a pure function over rendered objects and specs and returns a
// Report whose lists are sorted, so the same inputs always print the same
// text. Report.WriteText prints it for terminals; Report.WriteMarkdown for
// a GitHub Actions step summary, bounded so that a huge change stays
// readable.
//
// Sides prepares the two sides of kbuild diff: the recipe as it is, and
// either the same recipe at a git commit (CheckoutRecipe, which unpacks
// git archive's output with the checked extractor of package sources) or
// its counterpart in an index read and verified with siteread.ReadIndex,
// whose charts are pulled by digest with chartpin.PullPinned. Rebuild is
// kbuild rebuild-check: a recipe rebuilt and compared, archive by archive
// and spec digest, with what the index publishes.
package review
