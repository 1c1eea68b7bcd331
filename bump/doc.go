// Package bump turns an upstream release found by package watch into a
// recipe change: every followed source's URL, tag commit or chart version
// with its digest fetched and verified, every followed image re-pinned by
// digest for the rule's platform, spec.version set and spec.build reset
// to 1 (or, when only an upstream under also: moved, the version kept and
// the build raised by one), edited in place so that every other line of recipe.yaml, comments
// included, stays byte for byte. The edited recipe is validated (and put
// back when it does not validate) and compared with its published or
// committed version by package review, for the reviewer.
//
// Outdated loads recipes and their watch rules and runs watch.Check over
// them: the library call of kbuild outdated.
package bump
