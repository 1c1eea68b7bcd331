package index

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
