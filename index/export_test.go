package index

import (
	"errors"
	"sort"
)

// Aliases of unexported names for the external tests (package index_test).

var BigKubepkgIndex = bigKubepkgIndex

var BuildIndex = buildIndex

var FirstDiff = firstDiff

var KpParseIndex = kpParseIndex

type KpWIndex = kpWIndex

type KpWPackage = kpWPackage

var KubepkgWrittenIndex = kubepkgWrittenIndex

var MergeNewVersion = mergeNewVersion

var RandString = randString

var Record = record

var TestDigest = testDigest

var TestTime = testTime

// MergeIndex (a test helper: publishing adds records to the Builder
// instead) returns the index to publish over the published base b holds
// (added with AddPublished): every version of the base, plus every version
// of built. A version and build in both must have the same digest —
// published versions do not change — or MergeIndex fails with one
// *ConflictError per such version (joined); otherwise their delegated
// signatures are merged. Descriptions and homes come from built where it
// has them. The result has built's generated and expires times; generated
// must not be before the base's.
func (b *Builder) MergeIndex(built *RepositoryIndex) (*RepositoryIndex, error) {
	if _, err := b.checkTime(built.Generated); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(built.Packages))
	for name := range built.Packages {
		names = append(names, name)
	}
	sort.Strings(names)
	var conflicts []error
	for _, name := range names {
		p := built.Packages[name]
		for _, v := range p.Versions {
			bv := &builtVersion{v: v, origin: "the new index", desc: p.Description, home: p.Home}
			if err := b.prepare(bv); err != nil {
				return nil, err
			}
			if err := b.insert(name, bv); err != nil {
				conflicts = append(conflicts, err)
			}
		}
	}
	if len(conflicts) > 0 {
		return nil, errors.Join(conflicts...)
	}
	x, err := b.Index(built.Generated)
	if err != nil {
		return nil, err
	}
	x.Expires = built.Expires
	return x, nil
}
