#!/usr/bin/env bash
# Runs every Go fuzz target of kbuild for a while each (default 60s).
#   scripts/fuzz.sh [DURATION] [REGEXP]
#   scripts/fuzz.sh 10m            # the run to do before a release
#   scripts/fuzz.sh 60s 'Chart|Root' # only targets whose name matches
# Targets include the recipe decoder with aliases (FuzzParse), chart
# repository indexes (FuzzParseChartIndex), the root chain (FuzzRootChain),
# template rendering under its budget (FuzzRenderBudget), archives, signed
# indexes, roots and signatures, xz containers (FuzzXZDictionaries) and OCI
# manifests (FuzzManifestLimit). Minimisation of a new input is capped at
# 10s (Go's default of 60s per input stalls targets with large seeds).
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-60s}
match=${2:-.}
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	# shellcheck disable=SC2013 # function names are words
	for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
		[[ $f =~ $match ]] || continue
		echo "==> $pkg $f ($t)"
		go test "$pkg" -run '^$' -fuzz "^$f\$" -fuzztime "$t" -fuzzminimizetime 10s
	done
done
