#!/usr/bin/env bash
# Runs every Go fuzz target of kbuild for a while each (default 60s).
#   scripts/fuzz.sh [DURATION]
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-60s}
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
		echo "==> $pkg $f ($t)"
		go test "$pkg" -run '^$' -fuzz "^$f\$" -fuzztime "$t"
	done
done
